/**
 * The node's public surface: what the API server, the Electron glue, the benchmark
 * and the diagnostic bundle use. The implementation is electron/core/node/node.ts.
 */
import type { ChatMessage, GenerationParams, GenerationStats, RunnerEngineOptions, RunnerSchedule, ToolCall, Usage } from '../../../shared/runner-protocol';
import type { Settings } from '../../../shared/api';
import type { CatalogModel } from '../../../shared/catalog';
import type { CancelledBy } from '../../../shared/request-record';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import type { Logger } from 'pino';
import type { FastSynchOverride, LocalInstanceSnapshot, InstanceType, Snapshot, TtftSample } from '../../../shared/snapshot';

export interface SubmitRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens: number | null;
  temperature?: number | null;
  seed?: number | null;
  /** Stop sequences (at most 4); the runner ends at the first and does not send it. */
  stop?: string[];
  /**
   * When the request arrived, in `performance.now()` milliseconds; TTFT is measured
   * from here. Defaults to the moment `submit` is called.
   */
  arrivedAt?: number;
  /** The client's User-Agent, for the request log; null or absent when it sent none. */
  client?: string | null;
  /** The API dialect it came in by (the request log's and the metrics' `api`); absent: none said. */
  api?: string | null;
  /** Tools, tool choice, structured output and sampling, as the runner protocol names them. */
  tools?: GenerationParams['tools'];
  toolChoice?: GenerationParams['toolChoice'];
  responseFormat?: GenerationParams['responseFormat'];
  topP?: number;
  topK?: number;
  minP?: number;
  repetitionPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

/** What happens to one request, in order; exactly one terminal event (finished, cancelled, failed). */
export type RequestEvent =
  | { type: 'acknowledged' }
  | { type: 'prefill_progress'; processedTokens: number; totalTokens: number }
  | { type: 'token'; text: string; tokenId: number }
  /** The model's complete tool calls (before its terminal event, which then says finish `tool_calls`). */
  | { type: 'tool_calls'; toolCalls: ToolCall[] }
  /** `stopSequence`: the request's stop sequence that ended it (finish `stop`), null when none did or the runner did not say. */
  | { type: 'finished'; finishReason: 'stop' | 'length' | 'tool_calls'; usage: Usage; stats: GenerationStats | null; stopSequence?: string | null }
  | { type: 'cancelled'; usage: Usage }
  | { type: 'failed'; error: NodeError };

export { NodeError, type NodeErrorCode } from '../events/node-error';
import { NodeError, type NodeErrorCode } from '../events/node-error';

export interface RequestHandle {
  /** The completion id ("chatcmpl-..."), also the id for `/v1/cancel/{id}`. */
  id: string;
  model: string;
  instanceId: string;
  promptTokens: number;
  /** Epoch seconds, as OpenAI's `created`. */
  created: number;
  /** Resolves with the terminal event. */
  done: Promise<Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>>;
}

export interface CreateInstanceOptions {
  model: string;
  instanceType: InstanceType;
  fastSynch: FastSynchOverride;
  /** Needed to create a two-ring-with-fast-synch situation (else NodeError fast_synch_shared_gpu). */
  acknowledgeRisk: boolean;
  /** Never unloaded when idle nor evicted (the safe pair is pinned). Default false. */
  pin?: boolean;
  /** Seconds idle before it unloads; null: never; absent: the setting (`onDemand.idleTtlSeconds`). */
  ttlSeconds?: number | null;
  /** A request started it (load on request); shown, and in the event log. Default false. */
  onDemand?: boolean;
  /** What it holds in memory by the fit estimate (electron/core/fit/); default the catalog's figure. */
  memoryBytes?: number;
  /** Its runner's schedule; absent: the setting `runner.schedule`. */
  schedule?: RunnerSchedule;
  /** Its runner's prompt cache cap as the fit check counted it; absent: computed from the setting. */
  promptCacheBytes?: number;
}

/** A change of an instance's residency: pinned, or its idle time to live (null: never; undefined: the setting). */
export interface ResidencyUpdate {
  pin?: boolean;
  ttlSeconds?: number | null;
}

/** One entry of the node's bounded event log (diagnostic bundle's events.jsonl); see events/node-event.ts. */
export type { NodeEvent, UnloadReason } from '../events/node-event';
import type { NodeEvent, UnloadReason } from '../events/node-event';
import type { RequestDecodeSharing } from '../sharing/request-sharing';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { PacingTuning } from '../pacing/pacing-plan';
import type { EventLog } from './event-log';
import type { SnapshotHub } from '../app-state/snapshot-hub';

/** Per-request timeline for the diagnostic bundle (monotonic ms; null when it did not happen). */
export interface RequestTimeline {
  requestId: string;
  instanceId: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens served by the runner's prompt cache; null when the runner did not say. */
  cachedTokens?: number | null;
  arrivedAt: number;
  /** Present when the request arrived while its model was loading: when the load ended (null: it had not). */
  loadedAt?: number | null;
  dispatchedAt: number | null;
  acknowledgedAt: number | null;
  prefillStartAt: number | null;
  prefillEndAt: number | null;
  firstTokenAt: number | null;
  endedAt: number | null;
  outcome: 'finished' | 'cancelled' | 'failed' | 'in_flight';
  ttft: TtftSample | null;
  /** Decode tokens/s so far, null under two tokens (electron/core/sharing/decode-timing.ts). */
  decodeTokensPerSecond: number | null;
  /** Inter-token latency over this request's tokens, p50 and p95 ms; null under two tokens. */
  itlP50Ms: number | null;
  itlP95Ms: number | null;
  /** Its inter-token gaps alone on the GPU and beside each neighbour's phase (electron/core/sharing/request-sharing.ts). */
  decodeSharing: RequestDecodeSharing;
  /** Other instances' runners that were busy (prefilling or decoding) while this request waited or prefilled. */
  concurrentBusyInstances: string[];
}

/**
 * A request that just ended, as the node hands it to its `onRequestEnded` listeners
 * (the request log, the metrics, the history): its timeline and what the timeline
 * does not carry.
 */
export interface EndedRequest {
  timeline: RequestTimeline;
  /** Epoch ms of its arrival (the timeline's times are monotonic). */
  arrivedAtEpochMs: number;
  /** Epoch ms of its end. */
  endedAtEpochMs: number;
  client: string | null;
  /** The API dialect it came in by; null when not said. */
  api: string | null;
  /** Who cancelled it; null unless cancelled. */
  cancelledBy: CancelledBy | null;
  /** The NodeError code it failed with; null unless failed. */
  errorCode: NodeErrorCode | null;
  /** The runner's generation stats at the end, when it sent them (prompt and generation tokens/s). */
  stats: GenerationStats | null;
  /** Its inter-token gaps, ms, in order (electron/core/sharing/decode-timing.ts): the ITL histogram's samples. */
  itlGapsMs: readonly number[];
}

/** Options of `createNode` (electron/core/node/node.ts). */
export interface NodeOptions {
  /** Runner logs go to <dataDir>/logs; the sim GPU lives in <dataDir>/sim-gpu. */
  dataDir: string;
  /** exobar's own logger (pino): what the node's runners write there (a refused transition, at warn). */
  logger?: Pick<Logger, 'warn'>;
  /** Multiplies every sim duration (1 = calibrated real time). */
  simTimeScale?: number;
  /** Global fast-synch default from settings. */
  defaultFastSynch?: FastSynchOverride;
  /**
   * Models the node may launch beyond the built-in sim models (the local MLX models the
   * MLX service found), read at each look-up: running instances keep their model, new launches see the list now.
   */
  extraModels?: () => readonly CatalogModel[];
  /**
   * Why a model id the catalog lacks is absent, when the catalog's owner can tell (an
   * `mlx/` model while the MLX runtime is missing); added to the unknown model's error.
   */
  whyModelAbsent?: (id: string) => string | null;
  /** How to start a runner for an MLX model with its engine options; null when the MLX runtime is missing. */
  mlxSpawnSpec?: (model: CatalogModel, engine: RunnerEngineOptions) => SpawnSpec | null;
  /**
   * The settings `runner.*`, read at each instance's creation (default: the schema's
   * defaults); `loadStallSeconds` at each look for a stalled load (its default when absent).
   */
  runnerSettings?: () => Omit<Settings['runner'], 'loadStallSeconds' | 'simProfile'> &
    Partial<Pick<Settings['runner'], 'loadStallSeconds' | 'simProfile'>>;
  /** Requests waiting per instance before 429 (default 64). */
  queueCapacity?: number;
  /** Version string reported in the snapshot. */
  version?: string;
  /** Watchdog limits and restart policy; defaults suit the calibrated sim and real MLX. */
  watchdog?: Partial<{ prefillMs: number; decodeMs: number; lifecycleMs: number; floorMs: number; safetyFactor: number }>;
  restart?: Partial<{ baseDelayMs: number; maxDelayMs: number; maxRestarts: number; windowMs: number }>;
  /**
   * The idle time to live of an instance that has none of its own, seconds (null: never),
   * read when asked so a settings change applies at once. Default: the settings schema's `onDemand.idleTtlSeconds`.
   */
  idleTtlSeconds?: () => number | null;
  /** Keep generated text in the runners' stdout logs (a debug setting; off: only token lengths). */
  logGeneratedText?: boolean;
  /** The setting `sharing.policy`, read at every decision (default DEFAULT_SHARING_POLICY). */
  sharingPolicy?: () => SharingPolicy;
  /** The decode-first policy's numbers (the bench tunes them; default DEFAULT_PACING_TUNING). */
  pacingTuning?: Partial<PacingTuning>;
  /** The event log the node records into (the core shares it with the hub's warning diff); default a new one. */
  eventLog?: EventLog;
  /** The hub the node registers its section and warnings with (the core's); default a new one, recording into the event log. */
  hub?: SnapshotHub;
}

export interface ExobarNode {
  /** Every model this node can launch (sim catalog plus extra models). */
  models(): CatalogModel[];
  submit(request: SubmitRequest, onEvent: (event: RequestEvent) => void): RequestHandle;
  /** Cancels a request by its id; false when no such request is in flight. `by` is who asked (default: a client's cancel call). */
  cancel(requestId: string, by?: CancelledBy): boolean;
  /** Hears every request as it ends (once each, whatever the outcome); returns the unsubscribe. */
  onRequestEnded(listener: (ended: EndedRequest) => void): () => void;
  createInstance(options: CreateInstanceOptions): Promise<LocalInstanceSnapshot>;
  /** Resolves once the instance's runner is ready; rejects with a NodeError when it fails. */
  waitForReady(instanceId: string, timeoutMs?: number): Promise<void>;
  updateInstance(instanceId: string, update: { fastSynch: FastSynchOverride; mode: 'drain' | 'cancel'; acknowledgeRisk: boolean }): Promise<void>;
  deleteInstance(instanceId: string): Promise<void>;
  /**
   * Unloads an instance: stops its runner like a deletion, recorded as an unload with
   * its reason. Refuses (409) while requests are queued or in flight, and a pinned one
   * unless the operator asks. Synchronous up to the stop, so nothing can be admitted
   * between the check and the removal.
   */
  unloadInstance(instanceId: string, reason: UnloadReason): Promise<void>;
  /** Pins or unpins an instance, or sets its idle time to live. */
  setResidency(instanceId: string, update: ResidencyUpdate): void;
  /** Records a refused load on request in the event log (the loader's words). */
  recordLoadRefused(model: string, code: string, reason: string): void;
  /**
   * The operator's retry of a runner that failed for good or needs attention (stuck with
   * a possibly wedged GPU): a new runner starts, its failure count starting over.
   */
  retryInstance(instanceId: string): void;
  snapshot(): Snapshot;
  /** Snapshots on change, at most one per `throttleMs` (default 100 ms); returns an unsubscribe. */
  onSnapshot(listener: (snapshot: Snapshot) => void, throttleMs?: number): () => void;
  /**
   * Counts an input refused at a boundary ("http" or "ipc"); shown in the snapshot's
   * rejectedInputs. A runner's malformed output line is counted per runner instead, in
   * its runner.malformedLines.
   */
  countRejectedInput(boundary: string): void;
  /** The in-memory tails of an instance's runner output; null for an unknown instance. */
  runnerLogs(instanceId: string): { stdout: string; stderr: string } | null;
  recentEvents(): NodeEvent[];
  requestTimelines(): RequestTimeline[];
  /**
   * The pids of every runner process alive now, read from the supervisors (runners of
   * instances being deleted or shut down included): what a last-resort kill must reach.
   */
  runnerPids(): number[];
  /** Stops every runner cleanly (SIGTERM then SIGKILL) and fails in-flight requests. */
  shutdown(): Promise<void>;
}
