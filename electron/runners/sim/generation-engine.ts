/**
 * The runner's generation loop, simulated, in either schedule (docs/runner-protocol.md,
 * "Schedules"). `exo` is exo's loop (docs/domain.md, "How a runner generates"):
 * - tasks are read only between steps; every task read is acknowledged at once, and a
 *   generation task waits in a queue inside the runner until the batch has room (exo's
 *   runner hands each task to its engine, which queues it);
 * - at most one waiting task is admitted per step, and a step includes the whole prefill
 *   of a newly admitted prompt, in 4096-token chunks with a progress event after each;
 * - up to 8 admitted requests decode together, one token each per decode step;
 * - a cancel for a task waiting in the runner's queue removes it at the next step
 *   boundary; a cancel for an admitted task is read at every prefill-chunk boundary and
 *   every 100 decode steps; one for a task the runner never read is dropped.
 * `interleaved` differs where serving needs it: every waiting task that fits the batch is
 * admitted at the next step, a step holds at most one prefill chunk (sized from the
 * measured prefill rate to take about `--prefill-chunk-ms`, shared by the prompts
 * prefilling together) before the batch's decode step, and cancels are read every step.
 * Both consult the prompt cache (prompt-cache.ts): a hit prefills only the rest.
 */
import { performance } from 'node:perf_hooks';
import type { CatalogModel, SimTimings } from '../../../shared/catalog';
import type { CancelTask, Task } from '../../../shared/runner-protocol';
import { StopSequenceMatcher } from '../../../shared/stop-sequences';
import { promptTokens as promptTokensOf } from '../../../shared/token-count';
import type { SimPromptCache } from './prompt-cache';
import { shareChunk } from './prefill-groups';
import { CRASH_AFTER_TOKENS, detectFault, type Fault } from './faults';
import type { Inbox } from './inbox';
import type { Logger } from './logger';
import type { RunnerOutputWriter } from './output';
import type { Pacer } from './pacer';
import type { PrefillPacingState } from './prefill-pacing';
import type { RunnerState } from './runner-state';
import type { SharedGpu } from './shared-gpu';
import { createTokenSource, planCompletion, type CompletionPlan, type SimToken } from './token-stream';
import { scriptedAnswer } from './scripted-answer';
import type { ToolCall } from '../../../shared/runner-protocol';
import { DEFAULT_PREFILL_CHUNK_TOKENS, interleavedChunkTokens, MAX_DECODE_BATCH, MIN_INTERLEAVED_CHUNK_TOKENS, type RunnerSchedule, type Usage } from '../../../shared/runner-protocol';

/** exo's prefill chunk size (shared/runner-protocol.ts). */
export const PREFILL_CHUNK_TOKENS = DEFAULT_PREFILL_CHUNK_TOKENS;
/** Requests decoding together at most (exo's batch size, shared/runner-protocol.ts). */
export const MAX_BATCH = MAX_DECODE_BATCH;
/** Decode steps between two cancel checks (exo checks every ~100 tokens). */
export const CANCEL_CHECK_EVERY_STEPS = 100;
/** Rough KV-cache bytes per token per layer, for the peak-memory stat. */
const KV_BYTES_PER_TOKEN_PER_LAYER = 2048;

export type TextGenerationTask = Extract<Task, { kind: 'TextGeneration' }>;

interface ActiveRequest {
  task: TextGenerationTask;
  promptTokens: number;
  /** The prompt's tokens (the cache's key). */
  tokens: readonly string[];
  /** Prompt tokens the prompt cache served: not prefilled. */
  cachedTokens: number;
  /** Prompt tokens prefilled so far, of `promptTokens - cachedTokens`. */
  prefilled: number;
  /** Still prefilling (interleaved: between steps; exo: only inside its admission step). */
  prefilling: boolean;
  prefillStartedAt: number;
  plan: CompletionPlan;
  nextToken: () => SimToken;
  /** The request's stop sequences: text that may start one is held back until it is told apart. */
  stop: StopSequenceMatcher;
  produced: number;
  fault: Fault | null;
  prefillMs: number;
  decodeStartedAt: number;
  /** The scripted tool call it ends with, if any (scripted-answer.ts). */
  toolCall: ToolCall | null;
}

export interface EngineDeps {
  model: CatalogModel;
  timings: SimTimings;
  timeScale: number;
  out: RunnerOutputWriter;
  inbox: Inbox;
  state: RunnerState;
  gpu: SharedGpu;
  pacer: Pacer;
  /** The supervisor's prefill pacing: chunk size and the pause after each chunk. */
  pacing: PrefillPacingState;
  schedule: RunnerSchedule;
  /** The interleaved prefill chunk's target duration, simulated ms. */
  prefillChunkMs: number;
  cache: SimPromptCache;
  log: Logger;
  /** The crash fault: exit with code 1 now. */
  crash: (reason: string) => Promise<never>;
  /** The hang fault: stop emitting and processing, stay alive. */
  hang: (reason: string) => Promise<never>;
}

export class GenerationEngine {
  private active: ActiveRequest[] = [];
  /** Acknowledged, not admitted: waiting for room in the batch. */
  private waiting: TextGenerationTask[] = [];
  private stepsSinceCancelCheck = 0;
  /** The prefill rate measured on this runner's chunks (simulated tokens/s); the catalog's until measured. */
  private prefillTokensPerS: number;

  constructor(private readonly deps: EngineDeps) {
    this.prefillTokensPerS = deps.timings.prefillTokensPerS;
  }

  /**
   * Generates from `first` until no request is left, admitting queued tasks between
   * steps. Returns a Shutdown task if one arrived (the caller shuts down; admitted
   * requests are still active then and end with {@link failAll}).
   */
  async run(first: TextGenerationTask): Promise<Task | undefined> {
    return this.deps.schedule === 'exo' ? this.runExo(first) : this.runInterleaved(first);
  }

  private async runExo(first: TextGenerationTask): Promise<Task | undefined> {
    this.accept(first);
    for (;;) {
      // Step boundary: the only place where tasks are read.
      const shutdown = this.deps.inbox.takeShutdown();
      if (shutdown) return shutdown;
      this.deps.pacing.applyArrived(null);
      this.readTasks();
      const next = this.active.length < MAX_BATCH ? this.waiting.shift() : undefined;
      if (next !== undefined) await this.admit(next);
      if (this.active.length === 0) {
        if (this.waiting.length > 0 || this.deps.inbox.hasTask()) continue;
        break;
      }
      await this.decodeStep();
    }
    this.deps.gpu.idle();
    this.deps.state.set({ kind: 'RunnerReady' });
    return undefined;
  }

  /**
   * The interleaved schedule: at each step boundary every task read is acknowledged, every
   * cancel applied and every waiting task that fits the batch admitted; then one prefill
   * chunk, then one decode step of the requests past their prefill.
   */
  private async runInterleaved(first: TextGenerationTask): Promise<Task | undefined> {
    this.accept(first);
    for (;;) {
      const shutdown = this.deps.inbox.takeShutdown();
      if (shutdown) return shutdown;
      this.deps.pacing.applyArrived(this.prefillingNow()?.task.commandId ?? null);
      this.readTasks();
      this.cancelCheck();
      while (this.active.length < MAX_BATCH && this.waiting.length > 0) await this.admitForChunks(this.waiting.shift()!);
      if (this.active.length === 0) {
        if (this.waiting.length > 0 || this.deps.inbox.hasTask()) continue;
        break;
      }
      if (this.prefillingNow()) await this.prefillChunk();
      if (this.active.some((r) => !r.prefilling)) await this.decodeStep();
    }
    this.deps.gpu.idle();
    this.deps.state.set({ kind: 'RunnerReady' });
    return undefined;
  }

  /** The first admitted request still prefilling (prefills go in admission order). */
  private prefillingNow(): ActiveRequest | undefined {
    return this.active.find((r) => r.prefilling);
  }

  /** Interleaved admission: the CPU side now; the prefill comes chunk by chunk in the next steps. */
  private async admitForChunks(task: TextGenerationTask): Promise<void> {
    const request = await this.startRequest(task);
    request.prefillStartedAt = performance.now();
  }

  /**
   * One prefill chunk: as many tokens as the measured rate does in `prefillChunkMs` (a
   * pacing's smaller chunk wins), shared by the prompts prefilling as the MLX runner
   * shares it (prefill-groups.ts: arrival order, prompts at the same offset together), a
   * progress event for each, then a cancel check and the pacing's pause.
   */
  private async prefillChunk(): Promise<void> {
    const { timings, timeScale, pacing } = this.deps;
    let budget = interleavedChunkTokens(this.prefillTokensPerS, this.deps.prefillChunkMs);
    if (pacing.requestedChunkTokens !== null) budget = Math.min(budget, pacing.requestedChunkTokens);
    const prefilling = this.active.filter((r) => r.prefilling);
    const shares = shareChunk(
      prefilling.map((r) => ({ offset: r.cachedTokens + r.prefilled, rest: r.promptTokens - r.cachedTokens - r.prefilled })),
      budget,
    );
    const touched: ActiveRequest[] = [];
    let fixedS = 0;
    let tokens = 0;
    prefilling.forEach((request, i) => {
      const n = shares[i] ?? 0;
      if (n === 0 && request.promptTokens - request.cachedTokens - request.prefilled > 0) return;
      if (request.prefilled === 0) fixedS += timings.prefillFixedS;
      request.prefilled += n;
      tokens += n;
      touched.push(request);
    });
    const startedAt = performance.now();
    await this.deps.gpu.compute((fixedS + tokens / timings.prefillTokensPerS) * timeScale * 1000);
    this.measurePrefill(tokens, (performance.now() - startedAt) / timeScale / 1000 - fixedS);
    for (const request of touched) {
      const total = request.promptTokens - request.cachedTokens;
      this.deps.out.chunk(request.task.commandId, { kind: 'PrefillProgressChunk', processedTokens: request.prefilled, totalTokens: total });
      if (request.prefilled >= total) this.prefillDone(request);
    }
    // No cancel check here: the next step boundary reads the tasks that arrived, then the
    // cancels, so a cancel written right after its task finds it (exo's check here would drop it).
    const next = this.prefillingNow();
    pacing.applyArrived(next?.task.commandId ?? null);
    if (next && pacing.pauseMs > 0) {
      this.deps.gpu.idle();
      await this.deps.pacer.wait(pacing.pauseMs);
    }
  }

  /** Learns the prefill rate from a chunk (simulated seconds of its token work); shared-GPU slowdowns shrink the next chunk. */
  private measurePrefill(tokens: number, seconds: number): void {
    // A short chunk's time is mostly timer noise: only chunks of a useful size teach the rate.
    if (tokens < MIN_INTERLEAVED_CHUNK_TOKENS || seconds <= 0) return;
    this.prefillTokensPerS = (this.prefillTokensPerS + tokens / seconds) / 2;
  }

  /** A prefill ended: the request decodes from the next step, its prompt is cached, the cache's state reported. */
  private prefillDone(request: ActiveRequest): void {
    request.prefilling = false;
    request.prefillMs = performance.now() - request.prefillStartedAt;
    request.decodeStartedAt = performance.now();
    const { cache } = this.deps;
    if (!cache.enabled) return;
    cache.store(request.tokens);
    this.deps.out.emit(cache.stats());
  }

  /** Every task that arrived is acknowledged now; cancels for waiting tasks take effect now. */
  private readTasks(): void {
    for (let task = this.deps.inbox.takeNextTask(); task; task = this.deps.inbox.takeNextTask()) {
      if (task.kind === 'TextGeneration') this.accept(task);
      else this.rejectWhileGenerating(task);
    }
    const waitingIds = new Set(this.waiting.map((t) => t.taskId));
    for (const cancel of this.deps.inbox.takeCancelsFor(waitingIds)) this.applyCancel(cancel);
  }

  private accept(task: TextGenerationTask): void {
    this.deps.out.acknowledged(task.taskId);
    this.deps.out.taskStatus(task.taskId, 'Running');
    if (this.deps.state.kind !== 'RunnerRunning') this.deps.state.set({ kind: 'RunnerRunning' });
    this.waiting.push(task);
  }

  /** Ends every admitted request with an ErrorChunk and Failed (shutdown). */
  failAll(errorMessage: string): void {
    for (const task of [...this.active.map((r) => r.task), ...this.waiting]) {
      this.deps.out.chunk(task.commandId, { kind: 'ErrorChunk', errorMessage });
      this.deps.out.taskStatus(task.taskId, 'Failed');
    }
    this.active = [];
    this.waiting = [];
  }

  private rejectWhileGenerating(task: Task): void {
    this.deps.log.warn({ taskId: task.taskId, kind: task.kind }, 'lifecycle task while generating: failed');
    this.deps.out.acknowledged(task.taskId);
    this.deps.out.taskStatus(task.taskId, 'Failed');
  }

  /** The CPU side of an admission (template, tokenizer, cache lookup); the request joins the batch, prefilling. */
  private async startRequest(task: TextGenerationTask): Promise<ActiveRequest> {
    const { timings, timeScale } = this.deps;
    const fault = detectFault(task.params.messages);
    if (fault === 'hang') await this.deps.hang(`fault prompt in task ${task.taskId}`);
    const tokens = promptTokensOf(task.params.messages);
    const cachedTokens = this.deps.cache.lookup(tokens);
    // Its turn has come: the 0-token progress tells the node its prefill begins now, so the
    // time it waited in this runner behind earlier prompts is not counted as its prefill
    // (the total is what it will prefill: the cached tokens left out).
    this.deps.out.chunk(task.commandId, { kind: 'PrefillProgressChunk', processedTokens: 0, totalTokens: tokens.length - cachedTokens });

    // CPU side (chat template, tokenizer): not GPU work, so not slowed by other runners.
    await this.deps.pacer.wait(timings.admitOverheadS * timeScale * 1000);

    const { plan, nextToken, toolCall } = this.answerOf(task);
    const request: ActiveRequest = {
      task,
      promptTokens: tokens.length,
      tokens,
      cachedTokens,
      prefilled: 0,
      prefilling: true,
      prefillStartedAt: 0,
      plan,
      nextToken,
      toolCall,
      stop: new StopSequenceMatcher(task.params.stop ?? []),
      produced: 0,
      fault,
      prefillMs: 0,
      decodeStartedAt: 0,
    };
    this.active.push(request);
    return request;
  }

  /** exo's admission of an acknowledged task: its whole prefill, inside this one step. */
  private async admit(task: TextGenerationTask): Promise<void> {
    const { out, timings, timeScale } = this.deps;
    const request = await this.startRequest(task);
    request.prefillStartedAt = performance.now();
    const total = request.promptTokens - request.cachedTokens;
    let processed = 0;
    const { pacing } = this.deps;
    while (processed < total) {
      const tokens = Math.min(pacing.chunkTokens, total - processed);
      const fixedS = processed === 0 ? timings.prefillFixedS : 0;
      await this.deps.gpu.compute((fixedS + tokens / timings.prefillTokensPerS) * timeScale * 1000);
      processed += tokens;
      request.prefilled = processed;
      out.chunk(task.commandId, { kind: 'PrefillProgressChunk', processedTokens: processed, totalTokens: total });
      // Chunk boundary, including right after the last chunk (before the first token).
      this.cancelCheck();
      if (!this.active.includes(request)) return;
      // A pacing read here shapes the next chunk; its pause leaves the GPU to the others.
      pacing.applyArrived(task.commandId);
      if (processed < total && pacing.pauseMs > 0) {
        this.deps.gpu.idle();
        // The pause is wall-clock ms, like the supervisor's measurements (not time-scaled).
        await this.deps.pacer.wait(pacing.pauseMs);
      }
    }
    this.prefillDone(request);
  }

  /** What the request will say: the scripted tool call or structured output, else the seeded words. */
  private answerOf(task: TextGenerationTask): { plan: CompletionPlan; nextToken: () => SimToken; toolCall: ToolCall | null } {
    const scripted = scriptedAnswer(task.params, task.commandId);
    if (scripted?.kind === 'tool_call') {
      return { plan: { length: 1, finishReason: 'tool_calls' }, nextToken: () => ({ text: '', tokenId: 1000 }), toolCall: scripted.call };
    }
    if (scripted?.kind === 'text') {
      const max = task.params.maxTokens;
      const cut = max !== null && max < scripted.pieces.length;
      let i = 0;
      return {
        plan: { length: cut ? max : scripted.pieces.length, finishReason: cut ? 'length' : 'stop' },
        nextToken: () => ({ text: scripted.pieces[i] ?? '', tokenId: 1000 + i++ }),
        toolCall: null,
      };
    }
    return { plan: planCompletion(task.params, task.commandId), nextToken: createTokenSource(task.params, task.commandId), toolCall: null };
  }

  /** One decode step: one token for every request past its prefill, step time growing with the batch. */
  private async decodeStep(): Promise<void> {
    const { timings, timeScale } = this.deps;
    const decoding = this.active.filter((r) => !r.prefilling);
    const batch = decoding.length;
    const stepS = timings.decodeStepS * (1 + timings.batchStepGrowth * (batch - 1));
    await this.deps.gpu.compute(stepS * timeScale * 1000);
    for (const request of decoding) {
      // A request cancelled by a crash check of an earlier one is gone.
      if (!this.active.includes(request)) continue;
      if (request.fault === 'crash' && request.produced >= Math.min(CRASH_AFTER_TOKENS, request.plan.length - 1)) {
        await this.deps.crash(`fault prompt in task ${request.task.taskId}`);
      }
      this.emitToken(request);
    }
    if (++this.stepsSinceCancelCheck >= CANCEL_CHECK_EVERY_STEPS) this.cancelCheck();
  }

  private emitToken(request: ActiveRequest): void {
    const token = request.nextToken();
    request.produced++;
    const { task } = request;
    const step = request.stop.push(token.text);
    if (!step.stopped && request.produced < request.plan.length) {
      // A token whose text is held back (it may start a stop sequence) still counts as generated.
      this.deps.out.chunk(task.commandId, { kind: 'TokenChunk', text: step.text, tokenId: token.tokenId, finishReason: null, usage: null, stats: null });
      return;
    }
    const text = step.stopped ? step.text : step.text + request.stop.flush();
    const finishReason = step.stopped ? 'stop' : request.plan.finishReason;
    const decodeMs = performance.now() - request.decodeStartedAt;
    const simSeconds = (ms: number) => Math.max(ms, 0.001) / 1000 / this.deps.timeScale;
    const totalTokens = request.promptTokens + request.produced;
    if (request.toolCall && !step.stopped) this.deps.out.chunk(task.commandId, { kind: 'ToolCallChunk', toolCalls: [request.toolCall] });
    this.deps.out.chunk(task.commandId, {
      kind: 'TokenChunk',
      text,
      tokenId: token.tokenId,
      finishReason,
      usage: this.usage(request.promptTokens, request.produced, request.cachedTokens),
      ...(step.matched !== null ? { stopSequence: step.matched } : {}),
      stats: {
        promptTps: (request.promptTokens - request.cachedTokens) / simSeconds(request.prefillMs),
        generationTps: request.produced / simSeconds(decodeMs),
        promptTokens: request.promptTokens,
        generationTokens: request.produced,
        peakMemoryBytes: this.deps.model.memoryBytes + totalTokens * KV_BYTES_PER_TOKEN_PER_LAYER * this.deps.timings.totalLayers,
      },
    });
    this.deps.out.taskStatus(task.taskId, 'Complete');
    this.active = this.active.filter((r) => r !== request);
  }

  /** Reads every cancel that has arrived; only admitted requests can be cancelled. */
  private cancelCheck(): void {
    this.stepsSinceCancelCheck = 0;
    for (const cancel of this.deps.inbox.drainCancels()) this.applyCancel(cancel);
  }

  private applyCancel(cancel: CancelTask): void {
    const waiting = this.waiting.find((t) => t.taskId === cancel.cancelledTaskId);
    if (waiting) {
      this.waiting = this.waiting.filter((t) => t !== waiting);
      this.endCancelled(waiting, promptTokensOf(waiting.params.messages).length, 0, 0);
      return;
    }
    const request = this.active.find((r) => r.task.taskId === cancel.cancelledTaskId);
    if (!request) {
      // exo's engine only cancels tasks it knows: the supervisor must hold cancels until the ack.
      this.deps.log.warn({ taskId: cancel.cancelledTaskId }, 'dropped a cancel for a task that is not admitted');
      return;
    }
    const { task } = request;
    this.endCancelled(task, request.promptTokens, request.produced, request.cachedTokens);
    this.active = this.active.filter((r) => r !== request);
    this.deps.log.info({ taskId: task.taskId, completionTokens: request.produced }, 'cancelled');
  }

  /** A request's usage; `cachedTokens` only when the cache is on (protocol 3). */
  private usage(promptTokens: number, completionTokens: number, cachedTokens: number): Usage {
    return this.deps.cache.enabled ? { promptTokens, completionTokens, cachedTokens } : { promptTokens, completionTokens };
  }

  private endCancelled(task: TextGenerationTask, promptTokens: number, completionTokens: number, cachedTokens: number): void {
    this.deps.out.chunk(task.commandId, {
      kind: 'TokenChunk',
      text: '',
      tokenId: -1,
      finishReason: 'cancelled',
      usage: this.usage(promptTokens, completionTokens, cachedTokens),
      stats: null,
    });
    this.deps.out.taskStatus(task.taskId, 'Cancelled');
  }
}
