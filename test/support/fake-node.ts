/**
 * The one in-process fake ExobarNode, for tests that need exact control: scripted
 * timings, a failure mid-stream, a full queue, a shared-GPU gate (the API tests), and
 * instances that walk exo's lifecycle statuses on short timers, fail while loading or
 * refuse to be created (the launcher's tests). Tests that can use the real node with
 * sim runners do; this fake is for the sharper cases.
 */
import { SIM_MODELS, type CatalogModel } from '../../shared/catalog';
import { decideFastSynch, wouldShareGpuWithFastSynch } from '../../shared/fast-synch-policy';
import type { RunnerStatus } from '../../shared/runner-protocol';
import { countPromptTokens } from '../../shared/token-count';
import type { FastSynchOverride, LaunchProgress, LocalInstanceSnapshot, Snapshot } from '../../shared/snapshot';
import { instanceFixture } from './instance-fixture';
import { stateOf } from './runner-state-of';
import {
  NodeError,
  type CreateInstanceOptions,
  type ExobarNode,
  type NodeEvent,
  type RequestTimeline,
  type RequestEvent,
  type RequestHandle,
  type ResidencyUpdate,
  type SubmitRequest,
  type UnloadReason,
} from '../../electron/core/node/node-types';
import { DEFAULT_PREFILL_CHUNK_TOKENS } from '../../shared/runner-protocol';
import { unloadRefusal } from '../../electron/core/on-demand/unload-refusal';

type Terminal = Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>;

export interface FakeNodeOptions {
  /** Milliseconds per generated token. */
  tokenMs?: number;
  /** Milliseconds per prefill chunk (4096 tokens, exo's). */
  prefillChunkMs?: number;
  /** Requests in flight per instance before queue_full. */
  queueCapacity?: number;
  /** Tokens generated when max_tokens is null. */
  defaultTokens?: number;
  defaultFastSynch?: FastSynchOverride;
  /**
   * Milliseconds per lifecycle step (each layer counts as one): new instances walk from
   * RunnerIdle through loading to RunnerReady. Unset: they are ready at once.
   */
  stepMs?: number;
  /** Models whose runner fails after loading this many layers. */
  failLoading?: Record<string, number>;
  /** Models whose createInstance throws this error. */
  failCreate?: Record<string, NodeError>;
  /** Makes deleteInstance reject. */
  failDelete?: boolean;
}

interface FakeInstance {
  snap: LocalInstanceSnapshot;
  timer: ReturnType<typeof setTimeout> | null;
  waiters: Array<{ resolve: () => void; reject: (err: Error) => void }>;
}

/** Prompts that script a failure, like exo's debug prompts. */
export const FAKE_PROMPTS = {
  failMidStream: 'FAKE FAIL MID STREAM',
  failAtOnce: 'FAKE FAIL AT ONCE',
  throwUnexpected: 'FAKE THROW UNEXPECTED',
} as const;

interface Flight {
  handle: RequestHandle;
  emit: (event: RequestEvent) => void;
  timers: NodeJS.Timeout[];
  completion: number;
  ended: boolean;
  resolve: (t: Terminal) => void;
}

export class FakeNode implements ExobarNode {
  readonly flights = new Map<string, Flight>();
  readonly cancelled: string[] = [];
  readonly submitted: SubmitRequest[] = [];
  /** Every launch progress the node was given, in order. */
  readonly progress: LaunchProgress[] = [];
  /** The instance calls in order ("create <model>", "wait <id>", "delete <id>"). */
  readonly calls: string[] = [];
  private readonly instances = new Map<string, FakeInstance>();
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private seq = 0;
  private cached: Snapshot | null = null;
  private published: Partial<Snapshot> = {};
  private nextId = 1;
  private launch: LaunchProgress | null = null;
  private readonly tokenMs: number;
  private readonly prefillChunkMs: number;
  private readonly queueCapacity: number;
  private readonly defaultTokens: number;
  shutdownCalls = 0;

  constructor(private readonly options: FakeNodeOptions = {}) {
    this.tokenMs = options.tokenMs ?? 2;
    this.prefillChunkMs = options.prefillChunkMs ?? 5;
    this.queueCapacity = options.queueCapacity ?? 64;
    this.defaultTokens = options.defaultTokens ?? 5;
  }

  models(): CatalogModel[] {
    return [...SIM_MODELS];
  }

  /** The fake's launch section: a launch's progress (`onProgress`), kept in order and shown in the snapshot's `launch`. */
  readonly showLaunch = (progress: LaunchProgress | null): void => {
    this.launch = progress;
    if (progress) this.progress.push(structuredClone(progress));
    this.changed();
  };

  submit(request: SubmitRequest, onEvent: (event: RequestEvent) => void): RequestHandle {
    this.submitted.push(request);
    const instance = [...this.instances.values()].map((i) => i.snap).find((i) => i.model === request.model);
    if (!instance) throw new NodeError('model_not_found', `no instance serves ${request.model}`, 404);
    const text = request.messages.map((m) => m.content).join(' ');
    if (text.includes(FAKE_PROMPTS.throwUnexpected)) throw new Error('a bug in the node');
    const id = `chatcmpl-fake${this.nextId++}`;
    const promptTokens = countPromptTokens(request.messages);
    let resolve!: (t: Terminal) => void;
    const done = new Promise<Terminal>((r) => (resolve = r));
    const handle: RequestHandle = { id, model: request.model, instanceId: instance.id, promptTokens, created: Math.floor(Date.now() / 1000), done };
    const flight: Flight = { handle, emit: onEvent, timers: [], completion: 0, ended: false, resolve };
    const inFlight = [...this.flights.values()].filter((f) => f.handle.instanceId === instance.id).length;
    if (inFlight >= this.queueCapacity) {
      this.end(flight, { type: 'failed', error: new NodeError('queue_full', `the queue of ${request.model} is full (${this.queueCapacity} requests)`, 429) });
      return handle;
    }
    if (text.includes(FAKE_PROMPTS.failAtOnce)) {
      this.end(flight, { type: 'failed', error: new NodeError('runner_failed', `the runner of ${request.model} failed`, 503) });
      return handle;
    }
    this.flights.set(id, flight);
    this.schedule(flight, request, text, promptTokens);
    this.changed();
    return handle;
  }

  private schedule(flight: Flight, request: SubmitRequest, text: string, promptTokens: number): void {
    let t = 1;
    const at = (ms: number, fn: () => void): void => {
      flight.timers.push(setTimeout(fn, ms));
    };
    at(t, () => flight.emit({ type: 'acknowledged' }));
    const chunks = Math.ceil(promptTokens / DEFAULT_PREFILL_CHUNK_TOKENS);
    for (let c = 1; c <= chunks; c++) {
      t += this.prefillChunkMs;
      const processed = Math.min(promptTokens, c * DEFAULT_PREFILL_CHUNK_TOKENS);
      at(t, () => flight.emit({ type: 'prefill_progress', processedTokens: processed, totalTokens: promptTokens }));
    }
    const tokens = request.maxTokens ?? this.defaultTokens;
    for (let i = 0; i < tokens; i++) {
      t += this.tokenMs;
      at(t, () => {
        if (text.includes(FAKE_PROMPTS.failMidStream) && i === 1) {
          this.end(flight, { type: 'failed', error: new NodeError('runner_crashed', 'the runner crashed (exit code 1)', 503) });
          return;
        }
        flight.completion += 1;
        flight.emit({ type: 'token', text: i === 0 ? 'tok' : ' tok', tokenId: i });
      });
    }
    t += 1;
    at(t, () =>
      this.end(flight, {
        type: 'finished',
        finishReason: request.maxTokens == null ? 'stop' : 'length',
        usage: { promptTokens, completionTokens: flight.completion },
        stats: { promptTps: 1000, generationTps: 100, promptTokens, generationTokens: flight.completion, peakMemoryBytes: 1 },
      }),
    );
  }

  private end(flight: Flight, terminal: Terminal): void {
    if (flight.ended) return;
    flight.ended = true;
    for (const timer of flight.timers) clearTimeout(timer);
    this.flights.delete(flight.handle.id);
    flight.emit(terminal);
    flight.resolve(terminal);
    this.changed();
  }

  /** The fake keeps no request records: nothing ever ends into them. */
  onRequestEnded(): () => void {
    return () => undefined;
  }

  cancel(requestId: string): boolean {
    const flight = this.flights.get(requestId);
    if (!flight) return false;
    this.cancelled.push(requestId);
    // Like a real runner: the cancel lands at the next check, a moment later.
    setTimeout(() => this.end(flight, { type: 'cancelled', usage: { promptTokens: flight.handle.promptTokens, completionTokens: flight.completion } }), 2);
    return true;
  }

  async createInstance(options: CreateInstanceOptions): Promise<LocalInstanceSnapshot> {
    this.calls.push(`create ${options.model}`);
    const failure = this.options.failCreate?.[options.model];
    if (failure) throw failure;
    const model = SIM_MODELS.find((m) => m.id === options.model);
    if (!model) throw new NodeError('model_not_found', `unknown model ${options.model}`, 404);
    // The real policy and gate, as the node applies them.
    const placed = [...this.instances.values()].map((i) => ({
      id: i.snap.id,
      model: i.snap.model,
      instanceType: i.snap.instanceType,
      fastSynch: i.snap.fastSynch.enabled,
    }));
    const decision = decideFastSynch(options.instanceType, options.fastSynch, this.options.defaultFastSynch ?? 'auto', placed.length > 0);
    if (
      !options.acknowledgeRisk &&
      wouldShareGpuWithFastSynch(placed, { id: 'new', model: model.id, instanceType: options.instanceType, fastSynch: decision.enabled })
    ) {
      throw new NodeError('fast_synch_shared_gpu', 'two models on one GPU with fast synch on can wedge it; pass acknowledgeRisk to go ahead', 409);
    }
    const id = `inst-${this.nextId++}`;
    const walking = this.options.stepMs !== undefined;
    const snap = fakeInstanceSnapshot(id, model, options.instanceType, walking ? { kind: 'RunnerIdle' } : { kind: 'RunnerReady' });
    snap.queue.capacity = this.queueCapacity;
    snap.fastSynch = { override: options.fastSynch, enabled: decision.enabled, reason: decision.reason, reported: walking ? null : decision.enabled };
    snap.residency = {
      ...snap.residency,
      pinned: options.pin ?? false,
      loadedOnDemand: options.onDemand ?? false,
      memoryBytes: model.memoryBytes,
      ...(options.ttlSeconds !== undefined ? { ttlSeconds: options.ttlSeconds } : {}),
    };
    const inst: FakeInstance = { snap, timer: null, waiters: [] };
    this.instances.set(id, inst);
    if (walking) this.advance(inst, model.sim?.totalLayers ?? 4);
    this.changed();
    return structuredClone(snap);
  }

  /** Adds an instance that is already ready (as if launched earlier). */
  addReady(modelId: string, instanceType: 'ring' | 'jaccl' = 'ring', fastSynch = false): string {
    const model = SIM_MODELS.find((m) => m.id === modelId);
    if (!model) throw new Error(`no model ${modelId}`);
    const id = `inst-${this.nextId++}`;
    const snap = fakeInstanceSnapshot(id, model, instanceType, { kind: 'RunnerReady' });
    snap.fastSynch = { override: 'auto', enabled: fastSynch, reason: fastSynch ? 'forced on by user' : 'ring instance', reported: fastSynch };
    this.instances.set(id, { snap, timer: null, waiters: [] });
    this.changed();
    return id;
  }

  /** Puts an existing instance's runner into a failed state. */
  failInstance(id: string, message: string): void {
    const inst = this.instances.get(id);
    if (inst) this.setStatus(inst, { kind: 'RunnerFailed', errorMessage: message });
  }

  private advance(inst: FakeInstance, totalLayers: number): void {
    const steps: RunnerStatus[] = [{ kind: 'RunnerConnecting' }, { kind: 'RunnerConnected' }];
    const failAt = this.options.failLoading?.[inst.snap.model];
    for (let l = 0; l <= totalLayers; l++) {
      steps.push({ kind: 'RunnerLoading', layersLoaded: l, totalLayers });
      if (failAt === l) {
        steps.push({ kind: 'RunnerFailed', errorMessage: `out of memory at layer ${l}` });
        break;
      }
    }
    steps.push({ kind: 'RunnerLoaded' }, { kind: 'RunnerWarmingUp' }, { kind: 'RunnerReady' });
    const next = (): void => {
      const status = steps.shift();
      if (!status || inst.snap.runner.status.kind === 'RunnerFailed') return;
      this.setStatus(inst, status);
      if (status.kind !== 'RunnerReady' && status.kind !== 'RunnerFailed') inst.timer = setTimeout(next, this.options.stepMs);
    };
    inst.timer = setTimeout(next, this.options.stepMs);
  }

  private setStatus(inst: FakeInstance, status: RunnerStatus): void {
    inst.snap.runner.status = status;
    inst.snap.runner.state = stateOf(status);
    if (status.kind === 'RunnerReady') {
      inst.snap.fastSynch.reported = inst.snap.fastSynch.enabled;
      for (const w of inst.waiters.splice(0)) w.resolve();
    } else if (status.kind === 'RunnerFailed') {
      for (const w of inst.waiters.splice(0)) w.reject(new NodeError('runner_failed', status.errorMessage, 502));
    }
    this.changed();
  }

  waitForReady(instanceId: string): Promise<void> {
    this.calls.push(`wait ${instanceId}`);
    const inst = this.instances.get(instanceId);
    if (!inst) return Promise.reject(new NodeError('instance_not_found', `no instance ${instanceId}`, 404));
    const status = inst.snap.runner.status;
    if (status.kind === 'RunnerReady') return Promise.resolve();
    if (status.kind === 'RunnerFailed') return Promise.reject(new NodeError('runner_failed', status.errorMessage, 502));
    return new Promise((resolve, reject) => inst.waiters.push({ resolve, reject }));
  }

  async updateInstance(instanceId: string, update: { fastSynch: 'auto' | 'on' | 'off' }): Promise<void> {
    const inst = this.instances.get(instanceId);
    if (!inst) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    inst.snap.fastSynch = { ...inst.snap.fastSynch, override: update.fastSynch };
    this.changed();
  }

  async deleteInstance(instanceId: string): Promise<void> {
    this.calls.push(`delete ${instanceId}`);
    if (this.options.failDelete) throw new Error('delete refused');
    const inst = this.instances.get(instanceId);
    if (!inst) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    if (inst.timer) clearTimeout(inst.timer);
    for (const w of inst.waiters.splice(0)) w.reject(new NodeError('instance_deleted', 'deleted', 410));
    this.instances.delete(instanceId);
    for (const flight of [...this.flights.values()]) {
      if (flight.handle.instanceId === instanceId)
        this.end(flight, { type: 'failed', error: new NodeError('instance_deleted', 'the instance was deleted', 503) });
    }
    this.changed();
  }

  /** Like the node: refuses while requests are in flight, and a pinned instance unless the operator asks. */
  async unloadInstance(instanceId: string, reason: UnloadReason): Promise<void> {
    this.calls.push(`unload ${instanceId} ${reason}`);
    const inst = this.instances.get(instanceId);
    if (!inst) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    const load = [...this.flights.values()].filter((f) => f.handle.instanceId === instanceId && !f.ended).length;
    const refusal = unloadRefusal({ id: instanceId, model: { id: inst.snap.model }, load, residency: inst.snap.residency }, reason);
    if (refusal) throw refusal;
    await this.deleteInstance(instanceId);
  }

  setResidency(instanceId: string, update: ResidencyUpdate): void {
    this.calls.push(`residency ${instanceId} ${JSON.stringify(update)}`);
    const inst = this.instances.get(instanceId);
    if (!inst) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    inst.snap.residency = {
      ...inst.snap.residency,
      ...(update.pin !== undefined ? { pinned: update.pin } : {}),
      ...(update.ttlSeconds !== undefined ? { ttlSeconds: update.ttlSeconds } : {}),
    };
    this.changed();
  }

  recordLoadRefused(model: string, code: string, reason: string): void {
    this.calls.push(`refused ${model} ${code}: ${reason}`);
  }

  /**
   * Shows these snapshot fields instead of the fake's own state and tells subscribers
   * (the app glue's tests drive the tray and notifications with hand-made snapshots).
   * Returns the snapshot they were sent.
   */
  publish(changes: Partial<Snapshot>): Snapshot {
    this.published = { ...this.published, ...changes };
    this.changed();
    return this.snapshot();
  }

  /** The current snapshot. */
  get current(): Snapshot {
    return this.snapshot();
  }

  /** Like the node: only a runner down for good can be retried; it is ready again at once here. */
  retryInstance(instanceId: string): void {
    const instance = this.instances.get(instanceId);
    if (!instance) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    const { state } = instance.snap.runner;
    if (state !== 'failed' && state !== 'needs_attention') throw new NodeError('not_retryable', `${instanceId} is ${state}`, 409);
    instance.snap.runner = { ...instance.snap.runner, state: 'ready', status: { kind: 'RunnerReady' }, attention: null };
    this.changed();
  }

  /** Like the node's: one snapshot object per version. */
  snapshot(): Snapshot {
    this.cached ??= { ...this.build(), ...this.published, seq: this.seq };
    return this.cached;
  }

  private build(): Snapshot {
    return {
      seq: this.seq,
      at: Date.now(),
      version: 'fake',
      apiBaseUrl: null,
      instances: [...this.instances.values()].map((i) => structuredClone(i.snap)),
      warnings: [],
      launch: this.launch,
      rejectedInputs: { ...this.rejectedInputs },
      mlx: null,
      exo: null,
      exoOffer: null,
      exoProcess: null,
    };
  }

  /** The runner pids the fake reports alive (none unless a test sets them: its instances are in memory). */
  pids: number[] = [];
  runnerPids(): number[] {
    return [...this.pids];
  }

  onSnapshot(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  readonly rejectedInputs: Record<string, number> = {};
  /** Every boundary that refused an input, in order. */
  readonly rejected: string[] = [];

  countRejectedInput(boundary: string): void {
    this.rejectedInputs[boundary] = (this.rejectedInputs[boundary] ?? 0) + 1;
    this.rejected.push(boundary);
    this.changed();
  }

  /** Hand-made history for the diagnostic bundle's tests (see diagnostics/synthetic-node.ts). */
  events: NodeEvent[] = [];
  timelines: RequestTimeline[] = [];
  logs: Record<string, { stdout: string; stderr: string }> = {};

  /** The logs a test planted; empty ones for any other instance in the snapshot; null for an unknown id. */
  runnerLogs(instanceId: string): { stdout: string; stderr: string } | null {
    return this.logs[instanceId] ?? (this.snapshot().instances.some((i) => i.id === instanceId) ? { stdout: '', stderr: '' } : null);
  }

  recentEvents(): NodeEvent[] {
    return [...this.events];
  }

  requestTimelines(): RequestTimeline[] {
    return [...this.timelines];
  }

  async shutdown(): Promise<void> {
    this.shutdownCalls += 1;
    for (const flight of [...this.flights.values()])
      this.end(flight, { type: 'failed', error: new NodeError('node_shutdown', 'exobar is shutting down', 503) });
    for (const inst of this.instances.values()) if (inst.timer) clearTimeout(inst.timer);
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  private changed(): void {
    this.seq += 1;
    this.cached = null;
    const snapshot = this.snapshot();
    for (const listener of this.listeners) listener(snapshot);
  }
}

/** The fake with instances that walk the lifecycle (2 ms a step unless told otherwise), for the launcher's tests. */
export function walkingFakeNode(options: FakeNodeOptions = {}): FakeNode {
  return new FakeNode({ stepMs: 2, ...options });
}

function fakeInstanceSnapshot(id: string, model: CatalogModel, instanceType: 'ring' | 'jaccl', status: RunnerStatus): LocalInstanceSnapshot {
  return instanceFixture({
    id,
    model: model.id,
    modelName: model.name,
    engine: model.engine,
    simulated: model.simulated,
    instanceType,
    runner: { state: stateOf(status), status, pid: null, restarts: 0, restartAt: null, lastExit: null, attention: null, malformedLines: 0 },
    fastSynch: { override: 'auto', enabled: false, reason: 'ring instance', reported: null },
  });
}
