/**
 * The snapshot: the one view of the node's state that every reader uses (renderer,
 * tray, diagnostic bundle, control API). Main pushes it with an increasing `seq`;
 * views never own state, they mirror the latest snapshot.
 *
 * Defined once, here, as zod schemas; every type is inferred from its schema, and the
 * renderer validates what crosses either bridge (HTTP/SSE and IPC) with these same
 * schemas (`parseSnapshotValue` below). Instances come from two sources: runners this
 * node supervises (`source: "local"`) and an attached exo cluster (`source: "exo"`);
 * both share one base of fields every view can show (queue, prefill, TTFT).
 *
 * Forward compatibility: objects strip unknown keys (zod's default) rather than pass
 * them through. The renderer is built with the node that serves it, so a key it does
 * not know is from a newer server; dropping it keeps the typed value exactly what the
 * views expect, while a missing or malformed known field is an error the page shows.
 */
import { z } from 'zod';
import { DownCauseSchema, EngineSchema, FastSynchOverrideSchema, InstanceTypeSchema, PendingCancelStateSchema, type InstanceType } from './instance-vocabulary';
import { ExoProcessStateSchema } from './exo-process';
import { ExoInstanceDetailSchema, ExoOfferSchema, ExoSectionSchema } from './exo-snapshot';
import { ResidencySchema } from './residency';
import { RunnerStatusSchema } from './runner-protocol';
import { InstanceSharingSchema } from './sharing';
import { RunnerEngineSnapshotSchema } from './runner-engine-view';

const epochMs = z.number().finite();
const ms = z.number().finite();

export { EngineSchema, FastSynchOverrideSchema, InstanceTypeSchema, type InstanceType };
export type FastSynchOverride = z.infer<typeof FastSynchOverrideSchema>;


/**
 * Where a request is, as the node sees it.
 * - queued: waiting in the node's queue (runner not ready, or the in-flight cap reached).
 * - loading: waiting in the node's queue while its model loads (the runner's status has the layers).
 * - awaiting_ack: written to the runner, not yet acknowledged (the runner is mid-step).
 * - prefilling, decoding.
 * - cancelling: a cancel was asked for and is held or sent, not yet confirmed.
 */
export const RequestPhaseSchema = z.enum(['queued', 'loading', 'awaiting_ack', 'prefilling', 'decoding', 'cancelling']);
export type RequestPhase = z.infer<typeof RequestPhaseSchema>;

export const RequestSnapshotSchema = z.object({
  id: z.string(),
  phase: RequestPhaseSchema,
  /** Milliseconds since the request arrived at the node, as of the snapshot's `at`. */
  ageMs: ms,
  promptTokens: z.number(),
  completionTokens: z.number(),
  /**
   * Decode speed of this request so far (electron/core/sharing/decode-timing.ts): tokens
   * after the first over the time from the first token to the latest, per second, and
   * the gap between consecutive tokens (inter-token latency) at p50 and p95. Null until
   * it has two tokens, and where exobar did not see its tokens (exo tasks it did not proxy).
   */
  decodeTokensPerSecond: z.number().nullable(),
  itlP50Ms: ms.nullable(),
  itlP95Ms: ms.nullable(),
});
export type RequestSnapshot = z.infer<typeof RequestSnapshotSchema>;

export const PrefillSnapshotSchema = z.object({
  requestId: z.string(),
  processedTokens: z.number(),
  totalTokens: z.number(),
  /** Estimated milliseconds left at the rate seen so far; null before the first chunk. */
  etaMs: ms.nullable(),
});
export type PrefillSnapshot = z.infer<typeof PrefillSnapshotSchema>;

export const PendingCancelSnapshotSchema = z.object({
  requestId: z.string(),
  /** held: the runner has not acknowledged the task yet; sent: written, not yet confirmed. */
  state: PendingCancelStateSchema,
  ageMs: ms,
});
export type PendingCancelSnapshot = z.infer<typeof PendingCancelSnapshotSchema>;

/** One time-to-first-token measurement and its parts (they add up to totalMs). */
export const TtftSampleSchema = z.object({
  requestId: z.string(),
  /** Epoch milliseconds of the first token. */
  at: epochMs,
  totalMs: ms,
  /**
   * Arrival at the node until its model was loaded, for a request that came while its
   * runner was loading (a load on request, or one it joined); absent: it waited for no load.
   */
  loadMs: ms.optional(),
  /** Arrival at the node (or the end of the load) until the runner acknowledged the task. */
  waitMs: ms,
  /**
   * Waiting in the runner: acknowledged until the runner began its prefill (its turn came
   * behind the runner's earlier prompts). Absent: none (exo's requests, older samples).
   */
  runnerWaitMs: ms.optional(),
  /** The start of its prefill until the last prefill progress chunk. */
  prefillMs: ms,
  /** Last prefill chunk until the first token. */
  firstTokenMs: ms,
  promptTokens: z.number(),
});
export type TtftSample = z.infer<typeof TtftSampleSchema>;

export const TtftSnapshotSchema = z.object({
  /** Most recent samples, oldest first, bounded. */
  samples: z.array(TtftSampleSchema),
  p50Ms: ms.nullable(),
  p95Ms: ms.nullable(),
  latest: TtftSampleSchema.nullable(),
});
export type TtftSnapshot = z.infer<typeof TtftSnapshotSchema>;

export const FastSynchSnapshotSchema = z.object({
  override: FastSynchOverrideSchema,
  /** The value the policy decided for this runner. */
  enabled: z.boolean(),
  /** Why, in words: "ring instance", "JACCL instance", "forced on by user", ... */
  reason: z.string(),
  /** The value the runner reported in its hello; null before the hello. */
  reported: z.boolean().nullable(),
});
export type FastSynchSnapshot = z.infer<typeof FastSynchSnapshotSchema>;

/**
 * A local runner's state, the one lifecycle value its supervisor holds
 * (electron/core/supervisor/runner-state-machine.ts holds the transitions): starting
 * (spawned, waiting for its hello), loading, warming_up, ready, running (requests in
 * progress), draining (a relaunch waits for the requests in flight; new ones queue),
 * down (it crashed, was found stuck or failed to start: its requests have failed and its
 * process is being made gone), restarting (a restart scheduled at `restartAt`), failed
 * (down for good: a start-up failure that would repeat, or too many failures),
 * needs_attention (stuck and not relaunched: the operator decides), stopping (Shutdown
 * sent, the process not yet gone), stopped.
 */
export const RUNNER_STATES = [
  'starting',
  'loading',
  'warming_up',
  'ready',
  'running',
  'draining',
  'down',
  'restarting',
  'failed',
  'needs_attention',
  'stopping',
  'stopped',
] as const;
export const RunnerStateSchema = z.enum(RUNNER_STATES);
export type RunnerState = z.infer<typeof RunnerStateSchema>;

/** Why a runner went down (shared/instance-vocabulary.ts's words; a fast-synch mismatch is a startup failure here). */
export const RunnerExitCauseSchema = DownCauseSchema.exclude(['fast_synch_mismatch']);
export type RunnerExitCause = z.infer<typeof RunnerExitCauseSchema>;

export const RunnerExitSnapshotSchema = z.object({
  cause: RunnerExitCauseSchema,
  /** Null when it died by a signal, or has not died (stuck and surviving SIGKILL). */
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  at: epochMs,
  /** In words, the runner's own where it said why (its error, its RunnerFailed message). */
  message: z.string(),
});
export type RunnerExitSnapshot = z.infer<typeof RunnerExitSnapshotSchema>;

export const RunnerSnapshotSchema = z.object({
  state: RunnerStateSchema,
  /** The runner's own last status (exo's RunnerStatus), as it reported it. */
  status: RunnerStatusSchema,
  pid: z.number().nullable(),
  restarts: z.number(),
  /** When the scheduled restart happens (epoch ms); null unless restarting. */
  restartAt: epochMs.nullable(),
  lastExit: RunnerExitSnapshotSchema.nullable(),
  /** Why it needs attention or failed for good, and what the operator can do; null otherwise. */
  attention: z.string().nullable(),
  /** Malformed or unknown stdout lines seen from this runner. */
  malformedLines: z.number(),
});
export type RunnerSnapshot = z.infer<typeof RunnerSnapshotSchema>;

const QueueSchema = z.object({
  /** Requests the node lets wait; null where the engine does not say (exo). */
  capacity: z.number().nullable(),
  requests: z.array(RequestSnapshotSchema),
});

/** What every instance has, whichever engine serves it: the views' common ground. */
export const InstanceBaseSchema = z.object({
  id: z.string(),
  model: z.string(),
  modelName: z.string(),
  instanceType: InstanceTypeSchema,
  queue: QueueSchema,
  prefill: PrefillSnapshotSchema.nullable(),
  pendingCancels: z.array(PendingCancelSnapshotSchema),
  ttft: TtftSnapshotSchema,
  /** Generated tokens per second over the last few seconds; null when idle with no sample. */
  tokensPerSecond: z.number().nullable(),
  /** Decode alone on its GPU and beside each neighbour's prefill or decode, rolling (shared/sharing.ts). */
  sharing: InstanceSharingSchema,
});
export type InstanceBase = z.infer<typeof InstanceBaseSchema>;

export const InstanceCountersSchema = z.object({
  completed: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  rejected: z.number(),
});

/**
 * The sharing policy is pacing this instance's prefill now (docs/sharing-policy.md):
 * since when, beside which streaming neighbours (model names), and how.
 */
export const PacingSnapshotSchema = z.object({
  since: epochMs,
  neighbours: z.array(z.string()),
  chunkTokens: z.number().int().positive().nullable(),
  pauseMs: z.number().int().nonnegative(),
  /** What engaged it: the streaming neighbour's live ITL beside this prefill over its solo ITL (absent from an older node). */
  trigger: z.object({ neighbour: z.string(), itlMs: z.number().nonnegative(), soloItlMs: z.number().positive(), ratio: z.number().nonnegative() }).optional(),
});
export type PacingSnapshot = z.infer<typeof PacingSnapshotSchema>;

/** An instance whose runner this node supervises. */
export const LocalInstanceSnapshotSchema = InstanceBaseSchema.extend({
  source: z.literal('local'),
  engine: EngineSchema,
  simulated: z.boolean(),
  runner: RunnerSnapshotSchema,
  fastSynch: FastSynchSnapshotSchema,
  queue: QueueSchema.extend({ capacity: z.number() }),
  counters: InstanceCountersSchema,
  /** Pinned or not, its idle time to live and when it unloads (shared/residency.ts). */
  residency: ResidencySchema,
  /** Set while its prefill is paced for a streaming neighbour; null otherwise (absent from a node that does not pace). */
  pacing: PacingSnapshotSchema.nullable().optional(),
  /** Its runner's schedule and prompt cache (shared/runner-engine-view.ts); null before the runner's hello. */
  runnerEngine: RunnerEngineSnapshotSchema.nullable().optional(),
  /**
   * True while pacing could not judge this model's stream: no baseline ITL yet (no solo
   * decode seen, none earlier, no calibrated figure for its model). Absent: not waiting.
   */
  pacingWaitingForBaseline: z.boolean().optional(),
});
export type LocalInstanceSnapshot = z.infer<typeof LocalInstanceSnapshotSchema>;

/** An instance of an attached exo cluster; exo's own view of it is under `exo`. */
export const ExoInstanceSnapshotSchema = InstanceBaseSchema.extend({
  source: z.literal('exo'),
  exo: ExoInstanceDetailSchema,
});
export type ExoInstanceSnapshot = z.infer<typeof ExoInstanceSnapshotSchema>;

export const InstanceSnapshotSchema = z.discriminatedUnion('source', [LocalInstanceSnapshotSchema, ExoInstanceSnapshotSchema]);
/** Either kind of instance; narrow on `source` before reading runner, fastSynch, engine or counters. */
export type InstanceSnapshot = z.infer<typeof InstanceSnapshotSchema>;

/**
 * Warning codes. The fast-synch ones apply to local and exo instances alike
 * (`two_ring_fast_synch` included); the `exo_*` ones come from an attached exo
 * cluster (docs/domain.md lists the failure modes behind each).
 */
export const WarningCodeSchema = z.enum([
  'two_ring_fast_synch',
  'two_jaccl_shared_gpu',
  'ring_fast_synch_beside_jaccl',
  'fast_synch_mismatch',
  'exo_runner_failed',
  'exo_node_lost',
  'exo_stuck_loading',
  'exo_cancelled_still_running',
  'exo_instance_without_runner',
  'exo_load_stalled',
  'exo_unreachable',
  'exo_dispatch_stall',
  'exo_runner_silent',
  'exo_fast_synch_mismatch',
  'exo_model_lost',
  'exo_cluster_split',
  'runner_load_stalled',
  'slower_than_usual',
]);
export type WarningCode = z.infer<typeof WarningCodeSchema>;

export const WarningSchema = z.object({
  code: WarningCodeSchema,
  /** The instances involved. */
  instanceIds: z.array(z.string()),
  title: z.string(),
  /** What can happen. */
  risk: z.string(),
  /** What to do about it. */
  fix: z.string(),
  /**
   * True when the warning rests on a value exobar assumed rather than knew: exo does
   * not publish a Mac's fast-synch value, so where neither exobar set it nor exo's log
   * says, exo's default (on) is assumed and the views say so. Absent means known.
   */
  assumed: z.boolean().optional(),
  /** The model a model-level warning is about (exo_model_lost, exo_load_stalled: the model Place again places). */
  model: z.string().optional(),
});
export type Warning = z.infer<typeof WarningSchema>;

export const LaunchProgressSchema = z.object({
  state: z.enum(['running', 'done', 'failed']),
  /** Human-readable current step: "Loading sim/llama-3.2-3b (12/28 layers)". */
  step: z.string(),
  models: z.array(z.string()),
  /** Index into models of the one being launched. */
  current: z.number(),
  error: z.string().nullable(),
  startedAt: epochMs,
});
export type LaunchProgress = z.infer<typeof LaunchProgressSchema>;

/** The MLX engine on this machine: found or not, and the "Set up MLX runtime" progress. */
export const MlxRuntimeSnapshotSchema = z.object({
  available: z.boolean(),
  /** True where MLX can run at all (macOS on Apple silicon): the setup is offered there. */
  supported: z.boolean(),
  python: z.string().nullable(),
  /** mlx-lm's version. */
  version: z.string().nullable(),
  /** MLX's own version (mlx.core.__version__), when found. */
  mlxVersion: z.string().nullable().optional(),
  /** Why it is (un)available, in words. */
  reason: z.string(),
  /** MLX models found on disk (they are in the catalog when the runtime is available). */
  localModels: z.number(),
  /**
   * True while a look for the runtime is under way (at start, after a setup, on "check
   * again"): the other fields are the last look's, "not checked yet" before the first.
   * The probe runs the interpreter, which takes seconds on a busy machine.
   */
  checking: z.boolean().optional(),
  setup: z
    .object({
      state: z.enum(['running', 'done', 'failed']),
      step: z.string(),
      message: z.string(),
      /** The last lines of pip's output. */
      outputTail: z.array(z.string()),
      error: z.string().nullable(),
    })
    .nullable(),
});
export type MlxRuntimeSnapshot = z.infer<typeof MlxRuntimeSnapshotSchema>;

export const SnapshotSchema = z.object({
  /** The state's version: increases exactly when the node's state changes; equal seq, equal snapshot. */
  seq: z.number(),
  /** Epoch milliseconds when this version was built; ages are as of this moment. */
  at: epochMs,
  version: z.string(),
  /** The local API's base URL (…/v1), or null when no API server runs. */
  apiBaseUrl: z.string().nullable(),
  instances: z.array(InstanceSnapshotSchema),
  warnings: z.array(WarningSchema),
  launch: LaunchProgressSchema.nullable(),
  /** Inputs refused at a boundary, per boundary ("http", "ipc", "runner"). */
  rejectedInputs: z.record(z.string(), z.number()),
  /** The MLX engine's state; absent or null where nothing has looked for it yet. */
  mlx: MlxRuntimeSnapshotSchema.nullable().optional(),
  /** The attached exo cluster; null when none is attached. */
  exo: ExoSectionSchema.nullable(),
  /** An exo found answering locally while none is attached (the views offer to attach); else null. */
  exoOffer: ExoOfferSchema.nullable(),
  /** This Mac's exo as exobar runs it (docs/exo-process.md); null while exobar has not started it. */
  exoProcess: ExoProcessStateSchema.nullable(),
});
export type Snapshot = z.infer<typeof SnapshotSchema>;

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
    exo: null,
    exoOffer: null,
    exoProcess: null,
  };
}

/**
 * Validates a snapshot that crossed a bridge (already decoded from JSON, or structured-
 * cloned over IPC); throws an Error that names the first bad field, so a proxy's page
 * or a server of another version becomes a clear connection error, not a blank page.
 */
export function parseSnapshotValue(value: unknown): Snapshot {
  const result = SnapshotSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.join('.') || 'root';
    throw new Error(
      `The server sent a snapshot this page does not understand (${where}: ${issue?.message ?? 'invalid'}); reload the page, or update exobar if the server is newer`,
    );
  }
  return result.data;
}

/** Parses a snapshot from JSON text (the event stream's data); throws an Error that says what was wrong. */
export function parseSnapshotJson(json: string): Snapshot {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('The server sent a snapshot that is not JSON');
  }
  return parseSnapshotValue(value);
}
