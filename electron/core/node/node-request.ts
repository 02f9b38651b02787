/**
 * One chat request as the node tracks it, from arrival to its single terminal event.
 * Holds the timestamps every view needs (phase, TTFT parts, the bundle's timeline);
 * never keeps prompt or completion text beyond handing tokens to the caller.
 */
import type { GenerationParams, GenerationStats, ToolCall, Usage } from '../../../shared/runner-protocol';
import type { RequestPhase, TtftSample } from '../../../shared/snapshot';
import type { CancelledBy } from '../../../shared/request-record';
import type { NodeError, NodeErrorCode, RequestEvent, RequestTimeline } from './node-types';
import { DecodeTiming, type TokenGap } from '../sharing/decode-timing';
import { RequestSharing } from '../sharing/request-sharing';
import { measureTtftParts } from './request-metrics';

type TerminalEvent = Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>;

export class NodeRequest {
  taskId: string | null = null;
  /**
   * Set when it arrived while its model was loading (the load is the first part of its
   * TTFT): when the load ended, null while it goes on. Undefined: it waited for no load.
   */
  loadedAt: number | null | undefined = undefined;
  /** Handed to the dispatcher (exobar writes at once; the baseline may still hold it). */
  dispatchQueuedAt: number | null = null;
  /** Written to the runner's stdin. */
  dispatchedAt: number | null = null;
  acknowledgedAt: number | null = null;
  /**
   * The runner began this task's prefill: its first prefill progress (the 0-token report
   * sent at admission). Until then an acknowledged task waits in the runner for its turn.
   */
  prefillStartAt: number | null = null;
  prefillEndAt: number | null = null;
  prefillProcessed = 0;
  prefillTotal = 0;
  firstTokenAt: number | null = null;
  endedAt: number | null = null;
  completionTokens = 0;
  cancelRequestedAt: number | null = null;
  finishReason: 'stop' | 'length' | 'tool_calls' | null = null;
  stats: GenerationStats | null = null;
  /** Prompt tokens the runner's prompt cache served, from its last usage; null when it did not say (no cache, older runner). */
  cachedTokens: number | null = null;
  /**
   * The prompt as the runner's tokenizer counted it, from its last usage; null until then.
   * The node's own count is exact for the sim but only a lower bound for MLX (shared/token-count.ts),
   * and a cache hit must be told against the prompt the cache saw.
   */
  runnerPromptTokens: number | null = null;
  /** The stop sequence that ended generation, when the runner said one did. */
  stopSequence: string | null = null;
  runnerError: string | null = null;
  ttft: TtftSample | null = null;
  outcome: RequestTimeline['outcome'] = 'in_flight';
  /** The client's User-Agent (the request log's `client`). */
  client: string | null = null;
  /** The API dialect it came in by (the request log's `api`). */
  api: string | null = null;
  /** Who asked for the cancel, once one was asked for. */
  cancelledBy: CancelledBy | null = null;
  /** The code it failed with, once it failed. */
  errorCode: NodeErrorCode | null = null;
  /** Epoch ms of arrival, for records that outlive this process (the monotonic clock does not). */
  readonly arrivedAtEpochMs: number;
  /** Decode tokens/s and inter-token latency over this request's tokens. */
  readonly decode: DecodeTiming;
  /** Its gaps alone on the GPU and beside each neighbour's phase (filled by the node's gap listener). */
  readonly sharing = new RequestSharing();
  readonly created = Math.floor(Date.now() / 1000);
  readonly done: Promise<TerminalEvent>;
  private resolveDone!: (event: TerminalEvent) => void;
  private ackWaiters: Array<() => void> = [];

  constructor(
    readonly id: string,
    readonly instanceId: string,
    readonly model: string,
    readonly params: GenerationParams,
    /** The node's count (shared/token-count.ts): exact for the sim, a lower bound for MLX. */
    private readonly nodePromptTokens: number,
    readonly arrivedAt: number,
    private readonly onEvent: (event: RequestEvent) => void,
    onGap?: (gap: TokenGap) => void,
  ) {
    this.decode = new DecodeTiming(onGap);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.arrivedAtEpochMs = Date.now() - (performance.now() - arrivedAt);
  }

  /**
   * The prompt's size in tokens, the one count usage, the request log, history and the
   * metrics all give: the runner's tokenizer count once its usage reports one, before
   * that the node's own.
   */
  get promptTokens(): number {
    return this.runnerPromptTokens ?? this.nodePromptTokens;
  }

  /** The runner's usage on a request's last chunk: its prompt count and cache hit. */
  markRunnerUsage(usage: Usage): void {
    if (usage.cachedTokens !== undefined) this.cachedTokens = usage.cachedTokens;
    this.runnerPromptTokens = usage.promptTokens;
    // The TTFT sample was taken before the runner counted: it tells the same count.
    if (this.ttft) this.ttft.promptTokens = usage.promptTokens;
  }

  get ended(): boolean {
    return this.endedAt !== null;
  }

  get phase(): RequestPhase {
    if (this.cancelRequestedAt !== null) return 'cancelling';
    if (this.dispatchedAt === null) return this.loadedAt === null ? 'loading' : 'queued';
    if (this.acknowledgedAt === null) return 'awaiting_ack';
    return this.firstTokenAt === null ? 'prefilling' : 'decoding';
  }

  /** Settles when the runner acknowledged the task or the request ended. */
  acknowledged(): Promise<void> {
    if (this.acknowledgedAt !== null || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.ackWaiters.push(resolve));
  }

  markAcknowledged(now: number): void {
    this.acknowledgedAt = now;
    this.releaseAckWaiters();
    this.onEvent({ type: 'acknowledged' });
  }

  markPrefill(processed: number, total: number, now: number): void {
    // A runner that reports no start (its first report comes after a chunk) began at the ack.
    this.prefillStartAt ??= processed === 0 ? now : this.acknowledgedAt;
    this.prefillProcessed = processed;
    this.prefillTotal = total;
    this.prefillEndAt = now;
    this.onEvent({ type: 'prefill_progress', processedTokens: processed, totalTokens: total });
  }

  /** Records a token; returns the TTFT sample when it is the first one. */
  markToken(text: string, tokenId: number, now: number): TtftSample | null {
    this.completionTokens += 1;
    this.decode.record(now);
    let sample: TtftSample | null = null;
    if (this.firstTokenAt === null) {
      this.firstTokenAt = now;
      sample = this.buildTtftSample(now);
      this.ttft = sample;
    }
    this.onEvent({ type: 'token', text, tokenId });
    return sample;
  }

  /** The runner's complete tool calls, handed to the caller as they come. */
  markToolCalls(toolCalls: ToolCall[]): void {
    this.onEvent({ type: 'tool_calls', toolCalls });
  }

  usage(): Usage {
    const promptTokens = this.promptTokens;
    const usage: Usage = { promptTokens, completionTokens: this.completionTokens };
    return this.cachedTokens === null ? usage : { ...usage, cachedTokens: Math.min(this.cachedTokens, promptTokens) };
  }

  finish(event: TerminalEvent, now = performance.now()): boolean {
    if (this.ended) return false;
    this.endedAt = now;
    this.outcome = event.type;
    if (event.type === 'failed') this.errorCode = event.error.code;
    this.releaseAckWaiters();
    this.onEvent(event);
    this.resolveDone(event);
    return true;
  }

  fail(error: NodeError): boolean {
    return this.finish({ type: 'failed', error });
  }

  timeline(concurrentBusyInstances: string[]): RequestTimeline {
    return {
      requestId: this.id,
      instanceId: this.instanceId,
      model: this.model,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      cachedTokens: this.cachedTokens,
      arrivedAt: this.arrivedAt,
      ...(this.loadedAt !== undefined ? { loadedAt: this.loadedAt } : {}),
      dispatchedAt: this.dispatchedAt,
      acknowledgedAt: this.acknowledgedAt,
      prefillStartAt: this.prefillStartAt ?? (this.prefillEndAt !== null || this.firstTokenAt !== null ? this.acknowledgedAt : null),
      prefillEndAt: this.prefillEndAt,
      firstTokenAt: this.firstTokenAt,
      endedAt: this.endedAt,
      outcome: this.outcome,
      ttft: this.ttft,
      ...this.decode.stats(),
      decodeSharing: this.sharing.value(),
      concurrentBusyInstances,
    };
  }

  /** The sample at the first token: the parts of request-metrics, the node's waits (dispatch and ack) as one, the runner's wait apart. */
  private buildTtftSample(now: number): TtftSample {
    const parts = measureTtftParts(this, now);
    return {
      requestId: this.id,
      at: Date.now(),
      totalMs: now - this.arrivedAt,
      ...(parts.loadMs !== null ? { loadMs: parts.loadMs } : {}),
      waitMs: (parts.dispatchMs ?? 0) + (parts.ackWaitMs ?? 0),
      runnerWaitMs: parts.runnerWaitMs ?? 0,
      prefillMs: parts.prefillMs ?? 0,
      firstTokenMs: parts.firstTokenMs ?? 0,
      promptTokens: this.promptTokens,
    };
  }

  private releaseAckWaiters(): void {
    for (const waiter of this.ackWaiters.splice(0)) waiter();
  }
}
