/**
 * The GPU sharing check (`exobar check sharing`, `POST /api/checks/sharing`, the
 * popover's "Check GPU sharing"): its request, its progress and its result, as zod
 * schemas both sides use. The experiments are electron/core/checks/'s; the markdown
 * report is built from the result (electron/core/checks/sharing-report.ts).
 */
import { z } from 'zod';

const ms = z.number().finite();

/** The experiments, in the order they run: `idle_neighbour` is B's decode with A resident and idle against A unloaded. */
export const CHECK_EXPERIMENTS = ['ttft', 'decode', 'throughput', 'idle_neighbour'] as const;

export const SharingCheckRequestSchema = z.strictObject({
  /** `[A, B]`: A prefills the long prompt, B is measured. Default: the safe pair (the two models running, else the sim pair). */
  models: z.tuple([z.string().min(1), z.string().min(1)]).optional(),
  /** A's long prompt, tokens (capped by A's context). */
  promptTokens: z.number().int().min(64).max(1_000_000).default(30_000),
  /** Streaming clients per model in experiment 3. */
  streams: z.number().int().min(1).max(64).default(8),
  /** Seconds of experiment 3. */
  seconds: z.number().min(1).max(3600).default(60),
  /** Repeat experiment 3 with fast synch on (Apple silicon only, with `consent`). */
  fastSynchCompare: z.boolean().default(false),
  /** The operator accepted the fast-synch risk in words (a GPU that can stay wedged until reboot). */
  consent: z.boolean().default(false),
  /** Experiment 1 through the blocking dispatch as well (exo's worker before its fix). */
  baseline: z.boolean().default(false),
  /** Which experiments to run (default all four). */
  experiments: z.array(z.enum(CHECK_EXPERIMENTS)).min(1).optional(),
  /** B's tokens per phase of experiment 2 (before and after A's prefill). */
  decodeTokens: z.number().int().min(8).max(10_000).default(64),
});
export type SharingCheckRequest = z.input<typeof SharingCheckRequestSchema>;
export type SharingCheckOptions = z.output<typeof SharingCheckRequestSchema>;

/** Decode figures over one span of B's stream. */
export const DecodeSpanSchema = z.object({
  tokens: z.number().int(),
  decodeTokensPerSecond: z.number().nullable(),
  itlP50Ms: ms.nullable(),
  itlP95Ms: ms.nullable(),
});
export type DecodeSpan = z.infer<typeof DecodeSpanSchema>;

const Skipped = z.object({ ran: z.literal(false), reason: z.string() });

/** One run of experiment 1 (on exo: one with exobar's hold on, one with it off). */
export const TtftRunSchema = z.object({
  /** B's time to first token, seconds, per condition; null when it could not be measured. */
  bAloneS: z.number().nullable(),
  bWhileAPrefillsS: z.number().nullable(),
  bWhileAPrefillsWithQueuedS: z.number().nullable(),
  /** The same through the blocking dispatch; null unless --baseline ran it. */
  baselineQueuedS: z.number().nullable(),
  baselineNote: z.string().nullable(),
  /** A's long prompt as sent and its prefill time. */
  promptTokens: z.number().int(),
  aPrefillS: z.number().nullable(),
  /** On exo, exobar's hold (setting `exo.hold`) for this run; null: a local run, where it does not apply. */
  hold: z.boolean().nullable().default(null),
});
export type TtftRun = z.infer<typeof TtftRunSchema>;

/** Experiment 1: its top-level figures are the first run's; `runs` holds every run (on exo: hold on, then off). */
export const TtftExperimentSchema = TtftRunSchema.extend({
  ran: z.literal(true),
  runs: z.array(TtftRunSchema).default([]),
});

/** One run of experiment 2 under one sharing policy. */
export const DecodeRunSchema = z.object({
  before: DecodeSpanSchema,
  during: DecodeSpanSchema,
  after: DecodeSpanSchema,
  /** during over before: B's decode tokens/s while A prefills, relative to solo. */
  decodeRatio: z.number().nullable(),
  itlP95Ratio: z.number().nullable(),
  /** after over before: A idle again, so about 1 (the control). */
  idleRatio: z.number().nullable(),
  /** B's inter-token gaps, ms since B's first token: the chart's line. */
  itl: z.array(z.object({ t: ms, itlMs: ms })),
  /** A's prefill, ms since B's first token: the chart's shaded band. */
  aPrefill: z.object({ start: ms, end: ms }).nullable(),
  /** A's prefill time in this run (request acknowledged to first token), seconds. */
  aPrefillS: z.number().nullable().default(null),
  /** The sharing policy in force for the run (setting `sharing.policy`); null: as configured (on exo, where exobar paces nothing). */
  policy: z.string().nullable(),
  /** On exo, exobar's hold (setting `exo.hold`) for this run; null: a local run. */
  hold: z.boolean().nullable().default(null),
});
export type DecodeRun = z.infer<typeof DecodeRunSchema>;

/**
 * Experiment 2. Its top-level figures are the first run's (policy `off` when the
 * policies are compared); `runs` holds every run, one per policy, in order.
 */
export const DecodeExperimentSchema = DecodeRunSchema.extend({
  ran: z.literal(true),
  /** One run per sharing policy (`off`, then `decode_first`), or on exo per hold (on, then off); same prompt and lengths. */
  runs: z.array(DecodeRunSchema).default([]),
  /** A's prefill time with `decode_first` over with `off`: what pacing costs A (null unless both ran). */
  prefillCostRatio: z.number().nullable().default(null),
});

export const ThroughputModelSchema = z.object({
  model: z.string(),
  completed: z.number().int(),
  failed: z.number().int(),
  requestsPerMinute: z.number(),
  tokensPerSecond: z.number(),
});
export const ThroughputRunSchema = z.object({
  fastSynch: z.boolean(),
  seconds: z.number(),
  streams: z.number().int(),
  models: z.array(ThroughputModelSchema),
  /** Why the run stopped early (a runner went silent), else null. */
  stoppedEarly: z.string().nullable(),
});
export const ThroughputExperimentSchema = z.object({
  ran: z.literal(true),
  fastSynchOff: ThroughputRunSchema,
  fastSynchOn: z.union([ThroughputRunSchema, Skipped]),
});

/**
 * Experiment 4: B decodes with A resident and idle (loaded, no request), then with A
 * unloaded (locally stopped through the node; on exo its instance deleted through exo's
 * API), same prompt and length. oMLX users measured idle resident siblings halving
 * decode on an M3 Ultra (docs/sharing-policy.md).
 */
export const IdleNeighbourExperimentSchema = z.object({
  ran: z.literal(true),
  /** B's decode with A resident and idle. */
  resident: DecodeSpanSchema,
  /** B's decode with A unloaded. */
  unloaded: DecodeSpanSchema,
  /** resident over unloaded tokens/s: below 1, A's mere residence slows B. */
  decodeRatio: z.number().nullable(),
  itlP95Ratio: z.number().nullable(),
  /** How A was unloaded and brought back, in words. */
  how: z.string(),
});

export const MachineFactsSchema = z.object({
  chip: z.string().nullable(),
  cpus: z.number().int(),
  memoryBytes: z.number(),
  os: z.string(),
  arch: z.string(),
  appleSilicon: z.boolean(),
  mlxVersion: z.string().nullable(),
  mlxLmVersion: z.string().nullable(),
});

export const CheckModelSchema = z.object({
  role: z.enum(['A', 'B']),
  id: z.string(),
  name: z.string(),
  engine: z.string(),
  simulated: z.boolean(),
  quantization: z.string().nullable(),
  contextLength: z.number().nullable(),
});

export const SharingCheckResultSchema = z.object({
  id: z.string(),
  kind: z.literal('sharing'),
  startedAt: z.number(),
  finishedAt: z.number(),
  /** True when a model is simulated: the sim's sharing model is calibrated for TTFT only; its decode figures are not evidence. */
  simulated: z.boolean(),
  /** `local` through this node's supervisor; `exo` through the proxy on one Mac. */
  target: z.object({ kind: z.enum(['local', 'exo']), node: z.string().nullable() }),
  machine: MachineFactsSchema,
  models: z.array(CheckModelSchema),
  options: z.object({ promptTokens: z.number(), streams: z.number(), seconds: z.number(), fastSynchCompare: z.boolean(), baseline: z.boolean() }),
  ttft: z.union([TtftExperimentSchema, Skipped]),
  decode: z.union([DecodeExperimentSchema, Skipped]),
  throughput: z.union([ThroughputExperimentSchema, Skipped]),
  idleNeighbour: z.union([IdleNeighbourExperimentSchema, Skipped]).default({ ran: false, reason: 'not run by this version' }),
  /** The instance ids before and after: the check leaves them as it found them. */
  instancesBefore: z.array(z.string()),
  instancesAfter: z.array(z.string()),
});
export type SharingCheckResult = z.infer<typeof SharingCheckResultSchema>;

export const CheckStateSchema = z.enum(['running', 'done', 'failed', 'cancelled']);

/** `GET /api/checks/{id}`: progress while it runs, then the result. */
export const CheckStatusSchema = z.object({
  id: z.string(),
  kind: z.literal('sharing'),
  state: CheckStateSchema,
  /** The step now, in words: "Experiment 2: B decodes while A prefills 30000 tokens". */
  step: z.string(),
  /** 0..1. */
  progress: z.number().min(0).max(1),
  startedAt: z.number(),
  error: z.string().nullable(),
  result: SharingCheckResultSchema.nullable(),
  /** The markdown report, once done. */
  markdown: z.string().nullable(),
});
export type CheckStatus = z.infer<typeof CheckStatusSchema>;

/** exo's published figures (docs/domain.md), for the report. */
export const EXO_PUBLISHED = {
  machine: 'Mac Studio M3 Ultra 96 GB, Llama-3.2-1B and Llama-3.2-3B, ~30k-token prompt',
  bAloneS: '0.23',
  bWhileAPrefillsS: '0.38-0.40',
  blockingQueuedS: '15.1-15.7',
  nonBlockingQueuedS: '0.34-0.42',
  collapseRequestsPerMinute: '2.2 and 7.2',
} as const;

/** One kept report in `GET /api/checks`: enough for the page's list. */
export const CheckSummarySchema = z.object({
  id: z.string(),
  startedAt: z.number(),
  models: z.array(z.string()),
  simulated: z.boolean(),
  /** B's decode tokens/s during A's prefill over solo (experiment 2), null when it did not run. */
  decodeRatio: z.number().nullable(),
});
export type CheckSummary = z.infer<typeof CheckSummarySchema>;

/** `GET /api/checks`: the kept reports, newest first, and the check running now (if any). */
export const CheckListSchema = z.object({
  checks: z.array(CheckSummarySchema),
  running: CheckStatusSchema.nullable().default(null),
});
export type CheckList = z.infer<typeof CheckListSchema>;
