/**
 * A small in-process ExobarNode for API tests that need exact control: scripted
 * timings, a failure mid-stream, a full queue, a shared-GPU gate. Tests that can use
 * the real node with sim runners do; this fake is for the sharper cases.
 */
import { SIM_MODELS, type CatalogModel } from '../../shared/catalog';
import { countPromptTokens } from '../../shared/token-count';
import type { LocalInstanceSnapshot, LaunchProgress, Snapshot } from '../../shared/snapshot';
import { NodeError, type CreateInstanceOptions, type ExobarNode, type RequestEvent, type RequestHandle, type SubmitRequest } from '../../electron/core/node-types';

type Terminal = Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>;

export interface FakeNodeOptions {
  /** Milliseconds per generated token. */
  tokenMs?: number;
  /** Milliseconds per 4096-token prefill chunk. */
  prefillChunkMs?: number;
  /** Requests in flight per instance before queue_full. */
  queueCapacity?: number;
  /** Tokens generated when max_tokens is null. */
  defaultTokens?: number;
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
  private readonly instances = new Map<string, LocalInstanceSnapshot>();
  private readonly listeners = new Set<(s: Snapshot) => void>();
  private seq = 0;
  private nextId = 1;
  private apiBaseUrl: string | null = null;
  private launch: LaunchProgress | null = null;
  private readonly tokenMs: number;
  private readonly prefillChunkMs: number;
  private readonly queueCapacity: number;
  private readonly defaultTokens: number;
  shutdownCalls = 0;

  constructor(options: FakeNodeOptions = {}) {
    this.tokenMs = options.tokenMs ?? 2;
    this.prefillChunkMs = options.prefillChunkMs ?? 5;
    this.queueCapacity = options.queueCapacity ?? 64;
    this.defaultTokens = options.defaultTokens ?? 5;
  }

  models(): CatalogModel[] {
    return [...SIM_MODELS];
  }

  setLaunchProgress(progress: LaunchProgress | null): void {
    this.launch = progress;
    this.changed();
  }

  setApiBaseUrl(url: string | null): void {
    this.apiBaseUrl = url;
    this.changed();
  }

  setMlxRuntime(): void {
    this.changed();
  }

  setExtraModels(): void {
    this.changed();
  }

  submit(request: SubmitRequest, onEvent: (event: RequestEvent) => void): RequestHandle {
    this.submitted.push(request);
    const instance = [...this.instances.values()].find((i) => i.model === request.model);
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
    const chunks = Math.ceil(promptTokens / 4096);
    for (let c = 1; c <= chunks; c++) {
      t += this.prefillChunkMs;
      const processed = Math.min(promptTokens, c * 4096);
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

  cancel(requestId: string): boolean {
    const flight = this.flights.get(requestId);
    if (!flight) return false;
    this.cancelled.push(requestId);
    // Like a real runner: the cancel lands at the next check, a moment later.
    setTimeout(() => this.end(flight, { type: 'cancelled', usage: { promptTokens: flight.handle.promptTokens, completionTokens: flight.completion } }), 2);
    return true;
  }

  async createInstance(options: CreateInstanceOptions): Promise<LocalInstanceSnapshot> {
    const model = SIM_MODELS.find((m) => m.id === options.model);
    if (!model) throw new NodeError('model_not_found', `unknown model ${options.model}`, 404);
    const fastSynch = options.fastSynch === 'on' || (options.fastSynch === 'auto' && options.instanceType === 'jaccl');
    const otherRings = [...this.instances.values()].filter((i) => i.instanceType === 'ring');
    if (options.instanceType === 'ring' && otherRings.length > 0 && (fastSynch || otherRings.some((i) => i.fastSynch.enabled)) && !options.acknowledgeRisk) {
      throw new NodeError('fast_synch_shared_gpu', 'two ring instances with fast synch on one GPU can wedge it; pass acknowledgeRisk to go ahead', 409);
    }
    const id = `inst-${this.nextId++}`;
    const instance: LocalInstanceSnapshot = {
      source: 'local',
      id,
      model: model.id,
      modelName: model.name,
      engine: model.engine,
      simulated: model.simulated,
      instanceType: options.instanceType,
      runner: { status: { kind: 'RunnerReady' }, pid: null, restarts: 0, lastExit: null, malformedLines: 0 },
      fastSynch: { override: options.fastSynch, enabled: fastSynch, reason: fastSynch ? 'forced on by user' : 'ring instance', reported: fastSynch },
      queue: { capacity: this.queueCapacity, requests: [] },
      prefill: null,
      pendingCancels: [],
      ttft: { samples: [], p50Ms: null, p95Ms: null, latest: null },
      tokensPerSecond: null,
      counters: { completed: 0, failed: 0, cancelled: 0, rejected: 0 },
    };
    this.instances.set(id, instance);
    this.changed();
    return instance;
  }

  async waitForReady(instanceId: string): Promise<void> {
    if (!this.instances.has(instanceId)) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
  }

  async updateInstance(instanceId: string, update: { fastSynch: 'auto' | 'on' | 'off' }): Promise<void> {
    const instance = this.instances.get(instanceId);
    if (!instance) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    instance.fastSynch = { ...instance.fastSynch, override: update.fastSynch };
    this.changed();
  }

  async deleteInstance(instanceId: string): Promise<void> {
    if (!this.instances.delete(instanceId)) throw new NodeError('instance_not_found', `no instance ${instanceId}`, 404);
    for (const flight of [...this.flights.values()]) {
      if (flight.handle.instanceId === instanceId) this.end(flight, { type: 'failed', error: new NodeError('instance_deleted', 'the instance was deleted', 503) });
    }
    this.changed();
  }

  snapshot(): Snapshot {
    return {
      seq: this.seq,
      at: Date.now(),
      version: 'fake',
      apiBaseUrl: this.apiBaseUrl,
      instances: [...this.instances.values()],
      warnings: [],
      launch: this.launch,
      rejectedInputs: { ...this.rejectedInputs },
      mlx: null,
      exo: null,
      exoOffer: null,
    };
  }

  onSnapshot(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  readonly rejectedInputs: Record<string, number> = {};

  countRejectedInput(boundary: string): void {
    this.rejectedInputs[boundary] = (this.rejectedInputs[boundary] ?? 0) + 1;
    this.changed();
  }

  runnerLogs(): null {
    return null;
  }

  recentEvents() {
    return [];
  }

  requestTimelines() {
    return [];
  }

  async shutdown(): Promise<void> {
    this.shutdownCalls += 1;
    for (const flight of [...this.flights.values()]) this.end(flight, { type: 'failed', error: new NodeError('node_shutdown', 'exobar is shutting down', 503) });
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  private changed(): void {
    this.seq += 1;
    const snapshot = this.snapshot();
    for (const listener of this.listeners) listener(snapshot);
  }
}
