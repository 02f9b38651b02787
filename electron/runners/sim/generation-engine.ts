/**
 * exo's generation loop, simulated (docs/domain.md, "How a runner generates"):
 * - tasks are read only between steps; every task read is acknowledged at once, and a
 *   generation task waits in a queue inside the runner until the batch has room (exo's
 *   runner hands each task to its engine, which queues it);
 * - at most one waiting task is admitted per step, and a step includes the whole prefill
 *   of a newly admitted prompt, in 4096-token chunks with a progress event after each;
 * - up to 8 admitted requests decode together, one token each per decode step;
 * - a cancel for a task waiting in the runner's queue removes it at the next step
 *   boundary; a cancel for an admitted task is read at every prefill-chunk boundary and
 *   every 100 decode steps; one for a task the runner never read is dropped.
 */
import { performance } from 'node:perf_hooks';
import type { CatalogModel, SimTimings } from '../../../shared/catalog';
import type { CancelTask, Task } from '../../../shared/runner-protocol';
import { StopSequenceMatcher } from '../../../shared/stop-sequences';
import { countPromptTokens } from '../../../shared/token-count';
import { CRASH_AFTER_TOKENS, detectFault, type Fault } from './faults';
import type { Inbox } from './inbox';
import type { Logger } from './logger';
import type { RunnerOutputWriter } from './output';
import type { Pacer } from './pacer';
import type { PrefillPacingState } from './prefill-pacing';
import type { RunnerState } from './runner-state';
import type { SharedGpu } from './shared-gpu';
import { createTokenSource, planCompletion, type CompletionPlan, type SimToken } from './token-stream';
import { DEFAULT_PREFILL_CHUNK_TOKENS, MAX_DECODE_BATCH } from '../../../shared/runner-protocol';

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
  plan: CompletionPlan;
  nextToken: () => SimToken;
  /** The request's stop sequences: text that may start one is held back until it is told apart. */
  stop: StopSequenceMatcher;
  produced: number;
  fault: Fault | null;
  prefillMs: number;
  decodeStartedAt: number;
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

  constructor(private readonly deps: EngineDeps) {}

  /**
   * Generates from `first` until no request is left, admitting queued tasks between
   * steps. Returns a Shutdown task if one arrived (the caller shuts down; admitted
   * requests are still active then and end with {@link failAll}).
   */
  async run(first: TextGenerationTask): Promise<Task | undefined> {
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

  /** Admission of an acknowledged task: its whole prefill, inside this one step. */
  private async admit(task: TextGenerationTask): Promise<void> {
    const { out, timings, timeScale } = this.deps;
    const fault = detectFault(task.params.messages);
    if (fault === 'hang') await this.deps.hang(`fault prompt in task ${task.taskId}`);
    // Its turn has come: the 0-token progress tells the node its prefill begins now, so the
    // time it waited in this runner behind earlier prompts is not counted as its prefill.
    out.chunk(task.commandId, { kind: 'PrefillProgressChunk', processedTokens: 0, totalTokens: countPromptTokens(task.params.messages) });

    // CPU side (chat template, tokenizer): not GPU work, so not slowed by other runners.
    await this.deps.pacer.wait(timings.admitOverheadS * timeScale * 1000);

    const request: ActiveRequest = {
      task,
      promptTokens: countPromptTokens(task.params.messages),
      plan: planCompletion(task.params, task.commandId),
      nextToken: createTokenSource(task.params, task.commandId),
      stop: new StopSequenceMatcher(task.params.stop ?? []),
      produced: 0,
      fault,
      prefillMs: 0,
      decodeStartedAt: 0,
    };
    this.active.push(request);

    const prefillStartedAt = performance.now();
    let processed = 0;
    const { pacing } = this.deps;
    while (processed < request.promptTokens) {
      const tokens = Math.min(pacing.chunkTokens, request.promptTokens - processed);
      const fixedS = processed === 0 ? timings.prefillFixedS : 0;
      await this.deps.gpu.compute((fixedS + tokens / timings.prefillTokensPerS) * timeScale * 1000);
      processed += tokens;
      out.chunk(task.commandId, { kind: 'PrefillProgressChunk', processedTokens: processed, totalTokens: request.promptTokens });
      // Chunk boundary, including right after the last chunk (before the first token).
      this.cancelCheck();
      if (!this.active.includes(request)) return;
      // A pacing read here shapes the next chunk; its pause leaves the GPU to the others.
      pacing.applyArrived(task.commandId);
      if (processed < request.promptTokens && pacing.pauseMs > 0) {
        this.deps.gpu.idle();
        // The pause is wall-clock ms, like the supervisor's measurements (not time-scaled).
        await this.deps.pacer.wait(pacing.pauseMs);
      }
    }
    request.prefillMs = performance.now() - prefillStartedAt;
    request.decodeStartedAt = performance.now();
  }

  /** One decode step: one token for every active request, step time growing with the batch. */
  private async decodeStep(): Promise<void> {
    const { timings, timeScale } = this.deps;
    const batch = this.active.length;
    const stepS = timings.decodeStepS * (1 + timings.batchStepGrowth * (batch - 1));
    await this.deps.gpu.compute(stepS * timeScale * 1000);
    for (const request of [...this.active]) {
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
    this.deps.out.chunk(task.commandId, {
      kind: 'TokenChunk',
      text,
      tokenId: token.tokenId,
      finishReason,
      usage: { promptTokens: request.promptTokens, completionTokens: request.produced },
      stats: {
        promptTps: request.promptTokens / simSeconds(request.prefillMs),
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
      this.endCancelled(waiting, countPromptTokens(waiting.params.messages), 0);
      return;
    }
    const request = this.active.find((r) => r.task.taskId === cancel.cancelledTaskId);
    if (!request) {
      // exo's engine only cancels tasks it knows: the supervisor must hold cancels until the ack.
      this.deps.log.warn({ taskId: cancel.cancelledTaskId }, 'dropped a cancel for a task that is not admitted');
      return;
    }
    const { task } = request;
    this.endCancelled(task, request.promptTokens, request.produced);
    this.active = this.active.filter((r) => r !== request);
    this.deps.log.info({ taskId: task.taskId, completionTokens: request.produced }, 'cancelled');
  }

  private endCancelled(task: TextGenerationTask, promptTokens: number, completionTokens: number): void {
    this.deps.out.chunk(task.commandId, {
      kind: 'TokenChunk',
      text: '',
      tokenId: -1,
      finishReason: 'cancelled',
      usage: { promptTokens, completionTokens },
      stats: null,
    });
    this.deps.out.taskStatus(task.taskId, 'Cancelled');
  }
}
