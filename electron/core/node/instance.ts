/**
 * One model instance on this node: its runner supervisor, its bounded request queue,
 * the requests in flight and their metrics. Everything here reacts to events; nothing
 * waits on another instance (docs/architecture.md, invariant 1).
 */
import type { RunnerEngineSnapshot } from '../../../shared/runner-engine-view';
import type { CatalogModel } from '../../../shared/catalog';
import type { FastSynchDecision } from '../../../shared/fast-synch-policy';
import type { Chunk } from '../../../shared/runner-protocol';
import { featureRefusal, NO_FEATURES, type RunnerFeatures } from './feature-gate';
import type { CancelledBy } from '../../../shared/request-record';
import type { FastSynchOverride, InstanceType, LocalInstanceSnapshot } from '../../../shared/snapshot';
import { NodeError, type NodeErrorCode } from './node-types';
import { RunnerSupervisor, type DownCause, type SupervisorEvent, type SupervisorOptions } from '../supervisor/runner-supervisor';
import { InstancePhases, phaseOf } from '../sharing/instance-phases';
import { SharingStats } from '../sharing/sharing-stats';
import { BusyIntervals } from './request-metrics';
import { buildInstanceSnapshot } from './instance-snapshot';
import type { Dispatcher } from './dispatcher';
import type { EventLog } from './event-log';
import { NodeRequest } from './node-request';
import { TokenRate } from './token-rate';
import { TtftStats } from './ttft-stats';
import type { ResidencyState } from '../on-demand/residency-state';

/** Longest wait for in-flight requests before a relaunch goes ahead anyway. */
const RELAUNCH_DRAIN_LIMIT_MS = 120_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export interface InstanceConfig {
  id: string;
  model: CatalogModel;
  instanceType: InstanceType;
  override: FastSynchOverride;
  decision: FastSynchDecision;
  queueCapacity: number;
  /** Tasks written to the runner at once; it batches 8 and acknowledges and queues the rest inside itself. */
  maxInFlight: number;
  supervisor: Omit<SupervisorOptions, 'instanceId' | 'expectedFastSynch'>;
  /** Pinned or not, its idle time to live, its last use (on-demand/residency-state.ts). */
  residency: ResidencyState;
}

/** Runner states on the way to ready: a request that arrives in one waits for the model to load. */
const LOADING_STATES = new Set(['starting', 'loading', 'warming_up', 'restarting']);

const DOWN_CODES: Record<DownCause, NodeErrorCode> = {
  crashed: 'runner_crashed',
  stuck: 'runner_stuck',
  fast_synch_mismatch: 'fast_synch_mismatch',
  startup_failed: 'runner_failed',
  stopped: 'instance_deleted',
};

export class Instance {
  readonly id: string;
  readonly model: CatalogModel;
  readonly instanceType: InstanceType;
  override: FastSynchOverride;
  decision: FastSynchDecision;
  readonly supervisor: RunnerSupervisor;
  readonly residency: ResidencyState;
  /** Set once when the instance is disposed: every later request gets it. */
  private disposedWith: NodeError | null = null;
  readonly counters = { completed: 0, failed: 0, cancelled: 0, rejected: 0 };
  private readonly busy = new BusyIntervals();
  /** Prefilling, decoding or idle on the GPU, over time: what neighbours' sharing statistics and pacing read. */
  readonly phases = new InstancePhases(performance.now());
  /** This model's decode alone and beside each neighbour's phase, rolling (the node files the gaps). */
  readonly sharing = new SharingStats('all');

  private readonly queue: NodeRequest[] = [];
  private readonly requests = new Map<string, NodeRequest>();
  private readonly byTask = new Map<string, NodeRequest>();
  private readonly ttft = new TtftStats();
  private readonly tokenRate = new TokenRate();
  private readyWaiters: Array<{ resolve: () => void; reject: (e: NodeError) => void }> = [];
  private reserved = 0;
  private readonly createdAt = performance.now();
  private loadedOnce = false;
  /** The current runner's schedule and prompt cache, from its hello and its PromptCacheStats; null before a hello. */
  private runnerEngine: RunnerEngineSnapshot | null = null;

  constructor(
    private readonly config: InstanceConfig,
    private readonly dispatcher: Dispatcher,
    private readonly log: EventLog,
    private readonly changed: () => void,
    private readonly onRequestEnded: (request: NodeRequest) => void,
  ) {
    this.id = config.id;
    this.model = config.model;
    this.instanceType = config.instanceType;
    this.override = config.override;
    this.decision = config.decision;
    this.residency = config.residency;
    this.supervisor = new RunnerSupervisor({ ...config.supervisor, instanceId: config.id, expectedFastSynch: () => this.decision.enabled }, (event) =>
      this.onSupervisorEvent(event),
    );
  }

  start(): void {
    this.supervisor.start();
  }

  /** True while the runner takes new requests; a relaunch's drain (state draining) is not. */
  /** What its runner said it can do beyond text (Hello `features`); null before the first hello. */
  features: RunnerFeatures | null = null;

  get ready(): boolean {
    return this.supervisor.serving;
  }

  /**
   * The error a request gets when the runner is down for good (failed or needs
   * attention, no restart coming) or the instance is gone; null otherwise. Derived
   * from the supervisor's one state, never kept beside it.
   */
  get fatalError(): NodeError | null {
    if (this.disposedWith) return this.disposedWith;
    const state = this.supervisor.runnerState;
    const down = this.supervisor.lastDown;
    if ((state !== 'failed' && state !== 'needs_attention') || !down) return null;
    return new NodeError(DOWN_CODES[down.cause], down.message, 503);
  }

  /** Requests admitted to this instance and not ended (queued or in flight). */
  get load(): number {
    return this.requests.size;
  }

  /** True while the snapshot shows values that move with the clock: request ages, cancel ages, the token rate. */
  get showsTimeDependentState(): boolean {
    return this.requests.size > 0 || this.supervisor.pendingCancels.size > 0 || (this.tokenRate.perSecond() ?? 0) > 0;
  }

  /** The pids of this instance's runner processes alive now (see RunnerSupervisor.livePids). */
  livePids(): number[] {
    return this.supervisor.livePids();
  }

  get live(): NodeRequest[] {
    return [...this.requests.values()];
  }

  /** Accepts a request or throws a NodeError (queue full, runner down for good). */
  admit(request: NodeRequest): void {
    if (this.fatalError) {
      this.counters.rejected += 1;
      throw this.fatalError;
    }
    if (this.requests.size >= this.config.queueCapacity) {
      this.counters.rejected += 1;
      throw new NodeError('queue_full', `the queue of ${this.model.id} is full (${this.config.queueCapacity} requests waiting or running); retry later`, 429);
    }
    this.requests.set(request.id, request);
    this.queue.push(request);
    this.residency.touch();
    // Its time to first token starts with the wait for the model to load.
    if (!this.ready && LOADING_STATES.has(this.supervisor.runnerState)) request.loadedAt = null;
    this.log.record({ kind: 'request_arrived', instanceId: this.id, requestId: request.id, data: { promptTokens: request.promptTokens } });
    this.pump();
    this.changed();
  }

  /** Cancels one of this instance's requests; see docs/architecture.md, invariant 2. */
  cancel(request: NodeRequest, by: CancelledBy = 'exobar'): void {
    if (request.ended || request.cancelRequestedAt !== null) return;
    request.cancelledBy = by;
    this.log.record({ kind: 'cancel_requested', instanceId: this.id, requestId: request.id, data: { phase: request.phase } });
    if (request.dispatchedAt === null) {
      // Still in the node: removed at once, the runner never hears of it.
      this.removeFromQueue(request);
      this.end(request, { type: 'cancelled', usage: request.usage() });
      return;
    }
    request.cancelRequestedAt = performance.now();
    this.supervisor.cancel(request.taskId!);
    this.changed();
  }

  waitForReady(timeoutMs: number): Promise<void> {
    if (this.ready) return Promise.resolve();
    if (this.fatalError) return Promise.reject(this.fatalError);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e: NodeError) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== waiter);
        reject(new NodeError('launch_failed', `${this.model.id} was not ready within ${Math.round(timeoutMs / 1000)} s`, 504));
      }, timeoutMs);
      this.readyWaiters.push(waiter);
    });
  }

  /**
   * Relaunches the runner with the current decision, after draining (letting in-flight
   * requests finish) or cancelling its requests. Queued requests wait for the new runner.
   */
  async relaunch(mode: 'drain' | 'cancel'): Promise<void> {
    this.supervisor.drain();
    this.changed();
    const inFlight = this.live.filter((r) => r.dispatchQueuedAt !== null);
    if (mode === 'cancel') for (const request of this.live) this.cancel(request);
    // A runner that never confirms must not block the relaunch: stop() fails what is left.
    await Promise.race([Promise.all(inFlight.map((r) => r.done)), delay(RELAUNCH_DRAIN_LIMIT_MS)]);
    await this.supervisor.relaunch();
    this.pump();
    this.changed();
  }

  /** The operator's retry of a runner down for good (failed or needs attention). */
  retry(): void {
    const state = this.supervisor.runnerState;
    if (state !== 'failed' && state !== 'needs_attention') {
      throw new NodeError(
        'not_retryable',
        `${this.model.id} is ${state.replace('_', ' ')}: only a failed runner or one that needs attention can be retried`,
        409,
      );
    }
    this.supervisor.retry();
    this.changed();
  }

  /** Ends every request with `error` and stops the runner for good. */
  async dispose(error: NodeError): Promise<void> {
    this.disposedWith = error;
    for (const request of this.live) {
      this.removeFromQueue(request);
      this.end(request, { type: 'failed', error });
    }
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
    await this.supervisor.dispose();
  }

  snapshot(now = performance.now()): LocalInstanceSnapshot {
    return buildInstanceSnapshot(
      {
        id: this.id,
        model: this.model,
        instanceType: this.instanceType,
        override: this.override,
        decision: this.decision,
        supervisor: this.supervisor,
        queueCapacity: this.config.queueCapacity,
        requests: this.live,
        requestForTask: (taskId) => this.byTask.get(taskId),
        ttft: this.ttft.snapshot(),
        tokensPerSecond: this.tokenRate.perSecond(now),
        counters: this.counters,
        residency: this.residency.snapshot(now, this.requests.size, this.ready),
        sharing: this.sharing.snapshot(now),
        runnerEngine: this.runnerEngine,
      },
      now,
    );
  }

  private pump(): void {
    while (this.ready && this.queue.length > 0 && this.reserved < this.config.maxInFlight) {
      const request = this.queue.shift()!;
      // Checked at submit when the hello had come; here for a request that waited for the load.
      const refusal = featureRefusal(request.params, this.features, this.model.id);
      if (refusal) {
        this.end(request, { type: 'failed', error: refusal });
        continue;
      }
      this.reserved += 1;
      request.dispatchQueuedAt = performance.now();
      request.taskId = this.supervisor.nextTaskId('gen');
      this.byTask.set(request.taskId, request);
      const task = {
        kind: 'TextGeneration' as const,
        taskId: request.taskId,
        commandId: request.id,
        params: request.params,
      };
      this.dispatcher.dispatch({
        send: () => {
          if (request.ended) return false;
          if (!this.ready) {
            // The runner went down between pump and send (the baseline holds jobs behind
            // other acks): back to the queue, sent again when a runner is ready, or failed
            // with the rest of the queue if none will be.
            this.requeue(request);
            return false;
          }
          request.dispatchedAt = performance.now();
          this.supervisor.submitGeneration(task);
          this.log.record({ kind: 'request_dispatched', instanceId: this.id, requestId: request.id });
          this.changed();
          return true;
        },
        acknowledged: request.acknowledged(),
      });
    }
  }

  private onSupervisorEvent(event: SupervisorEvent): void {
    const now = performance.now();
    switch (event.type) {
      case 'spawned':
        this.log.record({ kind: 'runner_spawned', instanceId: this.id, data: { pid: event.pid } });
        break;
      case 'hello':
        // A new runner: its own schedule, and a cache that starts empty.
        this.runnerEngine = {
          schedule: event.schedule,
          simProfile: event.simProfile,
          promptCache: event.promptCache ? { ...event.promptCache, entries: 0, bytes: 0, hits: 0, misses: 0, hitTokens: 0 } : null,
        };
        this.features = event.features ?? NO_FEATURES;
        this.log.record({
          kind: 'runner_hello',
          instanceId: this.id,
          data: { fastSynch: event.fastSynch, engine: event.engine, decided: this.decision.enabled },
        });
        break;
      case 'runner_status':
        this.log.record({ kind: 'runner_status', instanceId: this.id, data: { status: event.status } });
        break;
      case 'prompt_cache':
        if (this.runnerEngine?.promptCache) {
          const { entries, bytes, capBytes, hits, misses, hitTokens } = event.stats;
          this.runnerEngine = { ...this.runnerEngine, promptCache: { ...this.runnerEngine.promptCache, entries, bytes, capBytes, hits, misses, hitTokens } };
        }
        break;
      case 'ready':
        this.residency.touch(now);
        for (const request of this.live) if (request.loadedAt === null) request.loadedAt = now;
        if (!this.loadedOnce) {
          this.loadedOnce = true;
          this.log.record({
            kind: 'instance_loaded',
            instanceId: this.id,
            data: { model: this.model.id, loadMs: Math.round(now - this.createdAt), onDemand: this.residency.loadedOnDemand },
          });
        }
        for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
        this.pump();
        break;
      case 'ack': {
        const request = this.byTask.get(event.taskId);
        if (!request || request.ended) break;
        request.markAcknowledged(now);
        this.busy.markBusy(now);
        this.log.record({ kind: 'request_acknowledged', instanceId: this.id, requestId: request.id });
        break;
      }
      case 'chunk':
        this.onChunk(event.taskId, event.chunk, now);
        break;
      case 'task_status':
        this.onTaskStatus(event.taskId, event.status);
        break;
      case 'cancel_held':
      case 'cancel_sent': {
        const request = this.byTask.get(event.taskId);
        this.log.record({ kind: event.type, instanceId: this.id, requestId: request?.id });
        break;
      }
      case 'task_lost': {
        const request = this.byTask.get(event.taskId);
        // The runner's own error for this request, when it sent one before going down, says more than the supervisor can.
        const message = request?.runnerError ? `${request.runnerError} (${event.message})` : event.message;
        if (request) this.end(request, { type: 'failed', error: new NodeError(DOWN_CODES[event.cause], message, 503) });
        break;
      }
      case 'state':
        this.log.record({ kind: 'runner_state', instanceId: this.id, data: { from: event.from, to: event.to, reason: event.reason.slice(0, 300) } });
        break;
      case 'state_refused':
        this.log.record({
          kind: 'runner_state_refused',
          instanceId: this.id,
          data: { from: event.from, to: event.to, reason: event.reason.slice(0, 300) },
        });
        break;
      case 'malformed_line':
        this.log.record({ kind: 'runner_malformed_line', instanceId: this.id, data: { reason: event.reason.slice(0, 200) } });
        break;
      case 'watchdog':
        this.log.record({
          kind: 'watchdog_fired',
          instanceId: this.id,
          data: { phase: event.phase, silentMs: Math.round(event.silentMs), deadlineMs: Math.round(event.deadlineMs) },
        });
        break;
      case 'down':
        this.onDown(event);
        break;
    }
    this.trackPhase(now);
    this.changed();
  }

  private onChunk(taskId: string, chunk: Chunk, now: number): void {
    const request = this.byTask.get(taskId);
    if (!request || request.ended) return;
    if (chunk.kind === 'PrefillProgressChunk') {
      request.markPrefill(chunk.processedTokens, chunk.totalTokens, now);
      this.log.record({
        kind: 'prefill_progress',
        instanceId: this.id,
        requestId: request.id,
        data: { processed: chunk.processedTokens, total: chunk.totalTokens },
      });
    } else if (chunk.kind === 'TokenChunk') {
      // The last chunk's usage says how much of the prompt the runner's cache served (a cancel's too).
      if (chunk.usage) request.markRunnerUsage(chunk.usage);
      if (chunk.finishReason === 'cancelled' || chunk.finishReason === 'error') return;
      if (chunk.finishReason) {
        request.finishReason = chunk.finishReason;
        request.stats = chunk.stats;
        if (chunk.stopSequence !== undefined) request.stopSequence = chunk.stopSequence;
      }
      this.tokenRate.record(1, now);
      const sample = request.markToken(chunk.text, chunk.tokenId, now);
      if (sample) {
        this.ttft.add(sample);
        this.log.record({
          kind: 'first_token',
          instanceId: this.id,
          requestId: request.id,
          data: {
            totalMs: sample.totalMs,
            ...(sample.loadMs !== undefined ? { loadMs: sample.loadMs } : {}),
            waitMs: sample.waitMs,
            ...(sample.runnerWaitMs !== undefined ? { runnerWaitMs: sample.runnerWaitMs } : {}),
            prefillMs: sample.prefillMs,
            firstTokenMs: sample.firstTokenMs,
          },
        });
      }
    } else if (chunk.kind === 'ToolCallChunk') {
      request.markToolCalls(chunk.toolCalls);
    } else {
      request.runnerError = chunk.errorMessage;
    }
  }

  private onTaskStatus(taskId: string, status: string): void {
    const request = this.byTask.get(taskId);
    if (!request) return;
    if (status === 'Complete') {
      this.end(request, {
        type: 'finished',
        finishReason: request.finishReason ?? 'stop',
        usage: request.usage(),
        stats: request.stats,
        stopSequence: request.stopSequence,
      });
    } else if (status === 'Cancelled') {
      this.log.record({ kind: 'cancel_confirmed', instanceId: this.id, requestId: request.id });
      this.end(request, { type: 'cancelled', usage: request.usage() });
    } else {
      const message = request.runnerError ?? `the runner reported the task ${status}`;
      this.end(request, { type: 'failed', error: new NodeError('runner_failed', message, 500) });
    }
  }

  private onDown(event: Extract<SupervisorEvent, { type: 'down' }>): void {
    this.log.record({
      kind: 'runner_exited',
      instanceId: this.id,
      data: { cause: event.cause, code: event.exit?.code ?? null, signal: event.exit?.signal ?? null, reason: event.message },
    });
    if (event.willRestartInMs !== null) {
      this.log.record({ kind: 'runner_restart_scheduled', instanceId: this.id, data: { inMs: event.willRestartInMs } });
      return;
    }
    // No restart coming: nothing queued may wait for it (a client never hangs).
    const error = new NodeError(DOWN_CODES[event.cause], event.message, 503);
    for (const request of this.live) {
      this.removeFromQueue(request);
      this.end(request, { type: 'failed', error });
    }
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
  }

  private end(request: NodeRequest, event: Parameters<NodeRequest['finish']>[0]): void {
    const now = performance.now();
    if (!request.finish(event, now)) return;
    this.requests.delete(request.id);
    this.residency.touch(now);
    if (request.taskId) this.byTask.delete(request.taskId);
    if (request.dispatchQueuedAt !== null) this.reserved -= 1;
    if (event.type === 'finished') this.counters.completed += 1;
    else if (event.type === 'cancelled') this.counters.cancelled += 1;
    else this.counters.failed += 1;
    const ids = { instanceId: this.id, requestId: request.id };
    const completionTokens = request.completionTokens;
    if (event.type === 'failed') {
      this.log.record({ kind: 'request_failed', ...ids, data: { completionTokens, code: event.error.code, reason: event.error.message } });
    } else {
      this.log.record({ kind: event.type === 'finished' ? 'request_finished' : 'request_cancelled', ...ids, data: { completionTokens } });
    }
    if (request.acknowledgedAt !== null && !this.live.some((r) => r.acknowledgedAt !== null)) this.busy.markIdle(now);
    this.trackPhase(now);
    this.onRequestEnded(request);
    this.pump();
    this.changed();
  }

  /** The runner's phase from its live requests (acknowledged without a first token: prefilling). */
  private trackPhase(now: number): void {
    this.phases.set(phaseOf(this.live.map((r) => ({ admitted: r.acknowledgedAt !== null, decoding: r.firstTokenAt !== null }))), now);
  }

  /** Undoes a pump for a request that was never written: it waits in the queue again, in arrival order. */
  private requeue(request: NodeRequest): void {
    this.reserved -= 1;
    request.dispatchQueuedAt = null;
    if (request.taskId) this.byTask.delete(request.taskId);
    request.taskId = null;
    const index = this.queue.findIndex((queued) => queued.arrivedAt > request.arrivedAt);
    this.queue.splice(index === -1 ? this.queue.length : index, 0, request);
    this.log.record({ kind: 'request_requeued', instanceId: this.id, requestId: request.id });
    this.changed();
    // A runner that is back already would otherwise wait for the next event to pump.
    queueMicrotask(() => this.pump());
  }

  private removeFromQueue(request: NodeRequest): void {
    const index = this.queue.indexOf(request);
    if (index !== -1) this.queue.splice(index, 1);
  }

  /** Whether this instance's runner was busy for any time within [from, to]. */
  wasBusyDuring(from: number, to: number): boolean {
    return this.busy.overlapMs(from, to) > 0;
  }
}
