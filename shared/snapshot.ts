/**
 * The snapshot: the one view of the node's state that every reader uses (renderer,
 * tray, diagnostic bundle, control API). Main pushes it with an increasing `seq`;
 * views never own state, they mirror the latest snapshot.
 */
import type { Engine } from './catalog';
import type { RunnerStatus } from './runner-protocol';

export type InstanceType = 'ring' | 'jaccl';
export type FastSynchOverride = 'auto' | 'on' | 'off';

/** Where a request is, as the node sees it. */
export type RequestPhase =
  /** Waiting in the node's queue (runner not ready, or the in-flight cap reached). */
  | 'queued'
  /** Written to the runner, not yet acknowledged (the runner is mid-step). */
  | 'awaiting_ack'
  | 'prefilling'
  | 'decoding'
  /** A cancel was asked for and is held or sent, not yet confirmed. */
  | 'cancelling';

export interface RequestSnapshot {
  id: string;
  phase: RequestPhase;
  /** Milliseconds since the request arrived at the node. */
  ageMs: number;
  promptTokens: number;
  completionTokens: number;
}

export interface PrefillSnapshot {
  requestId: string;
  processedTokens: number;
  totalTokens: number;
  /** Estimated milliseconds left at the rate seen so far; null before the first chunk. */
  etaMs: number | null;
}

export interface PendingCancelSnapshot {
  requestId: string;
  /** held: the runner has not acknowledged the task yet; sent: written, not yet confirmed. */
  state: 'held' | 'sent';
  ageMs: number;
}

/** One time-to-first-token measurement and its parts (they add up to totalMs). */
export interface TtftSample {
  requestId: string;
  /** Epoch milliseconds of the first token. */
  at: number;
  totalMs: number;
  /** Arrival at the node until the runner acknowledged the task. */
  waitMs: number;
  /** Acknowledgement until the last prefill progress chunk. */
  prefillMs: number;
  /** Last prefill chunk until the first token. */
  firstTokenMs: number;
  promptTokens: number;
}

export interface TtftSnapshot {
  /** Most recent samples, oldest first, bounded. */
  samples: TtftSample[];
  p50Ms: number | null;
  p95Ms: number | null;
  latest: TtftSample | null;
}

export interface FastSynchSnapshot {
  override: FastSynchOverride;
  /** The value the policy decided for this runner. */
  enabled: boolean;
  /** Why, in words: "ring instance", "JACCL instance", "forced on by user", ... */
  reason: string;
  /** The value the runner reported in its hello; null before the hello. */
  reported: boolean | null;
}

export interface RunnerExitSnapshot {
  code: number | null;
  signal: string | null;
  /** Why the supervisor considers it dead: "crashed", "watchdog: no event for 30 s in prefill", ... */
  reason: string;
  at: number;
}

export interface RunnerSnapshot {
  status: RunnerStatus;
  pid: number | null;
  restarts: number;
  lastExit: RunnerExitSnapshot | null;
  /** Malformed or unknown stdout lines seen from this runner. */
  malformedLines: number;
}

export interface InstanceSnapshot {
  id: string;
  model: string;
  modelName: string;
  engine: Engine;
  simulated: boolean;
  instanceType: InstanceType;
  runner: RunnerSnapshot;
  fastSynch: FastSynchSnapshot;
  queue: { capacity: number; requests: RequestSnapshot[] };
  prefill: PrefillSnapshot | null;
  pendingCancels: PendingCancelSnapshot[];
  ttft: TtftSnapshot;
  /** Generated tokens per second over the last few seconds; null when idle with no sample. */
  tokensPerSecond: number | null;
  counters: { completed: number; failed: number; cancelled: number; rejected: number };
}

export type WarningCode = 'two_ring_fast_synch' | 'two_jaccl_shared_gpu' | 'ring_fast_synch_beside_jaccl' | 'fast_synch_mismatch';

export interface Warning {
  code: WarningCode;
  /** The instances involved. */
  instanceIds: string[];
  title: string;
  /** What can happen. */
  risk: string;
  /** What to do about it. */
  fix: string;
}

export interface LaunchProgress {
  state: 'running' | 'done' | 'failed';
  /** Human-readable current step: "Loading sim/llama-3.2-3b (12/28 layers)". */
  step: string;
  models: string[];
  /** Index into models of the one being launched. */
  current: number;
  error: string | null;
  startedAt: number;
}

/** The MLX engine on this machine: found or not, and the "Set up MLX runtime" progress. */
export interface MlxRuntimeSnapshot {
  available: boolean;
  /** True where MLX can run at all (macOS on Apple silicon): the setup is offered there. */
  supported: boolean;
  python: string | null;
  version: string | null;
  /** Why it is (un)available, in words. */
  reason: string;
  /** MLX models found on disk (they are in the catalog when the runtime is available). */
  localModels: number;
  setup: {
    state: 'running' | 'done' | 'failed';
    step: string;
    message: string;
    /** The last lines of pip's output. */
    outputTail: string[];
    error: string | null;
  } | null;
}

export interface Snapshot {
  seq: number;
  /** Epoch milliseconds when this snapshot was taken. */
  at: number;
  version: string;
  /** The local API's base URL (…/v1), or null when no API server runs. */
  apiBaseUrl: string | null;
  instances: InstanceSnapshot[];
  warnings: Warning[];
  launch: LaunchProgress | null;
  /** Inputs refused at a boundary, per boundary ("http", "ipc", "runner"). */
  rejectedInputs: Record<string, number>;
  /** The MLX engine's state; absent or null where nothing has looked for it yet. */
  mlx?: MlxRuntimeSnapshot | null;
}

/** A snapshot with nothing in it, for views before the first push. */
export function emptySnapshot(): Snapshot {
  return {
    seq: 0,
    at: 0,
    version: '0.0.0',
    apiBaseUrl: null,
    instances: [],
    warnings: [],
    launch: null,
    rejectedInputs: {},
    mlx: null,
  };
}
