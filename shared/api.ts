/**
 * Shapes crossing the control boundary (HTTP control API and Electron IPC alike),
 * with the schemas that validate them. One schema library (zod) for every boundary.
 */
import { z } from 'zod';
import type { FitCheck } from './fit-check';
import type { InstanceLifecycle } from './instance-state';
import { TtlSecondsSchema } from './residency';
import { FastSynchOverrideSchema, InstanceTypeSchema, type Engine, type InstanceType } from './instance-vocabulary';
import { DEFAULT_SHARING_POLICY, SharingPolicySchema } from './sharing-policy';
import { EXO_API_PORT, EXOBAR_API_PORT } from './addresses';
import {
  DEFAULT_PREFILL_CHUNK_MS,
  DEFAULT_RUNNER_SCHEDULE,
  MAX_PREFILL_CHUNK_MS,
  MIN_PREFILL_CHUNK_MS,
  RunnerScheduleSchema,
  SimProfileNameSchema,
} from './runner-protocol';

export { FastSynchOverrideSchema, InstanceTypeSchema };

/** POST /api/instances */
export const CreateInstanceRequestSchema = z.strictObject({
  model: z.string().min(1).max(300),
  instanceType: InstanceTypeSchema.default('ring'),
  fastSynch: FastSynchOverrideSchema.default('auto'),
  /** Required to create an instance that would put two ring runners with fast synch on one GPU. */
  acknowledgeRisk: z.boolean().default(false),
  /**
   * Start another instance even when the model already runs (another copy of its
   * weights in memory). Without it, a launch of a running model answers with the
   * running instance (`reused: true`).
   */
  duplicate: z.boolean().default(false),
  /** Never unload it when idle, never evict it to make room (the safe pair is pinned). */
  pin: z.boolean().optional(),
  /** Seconds idle before it unloads, or -1 for never; absent: the setting `onDemand.idleTtlSeconds`. */
  ttlSeconds: TtlSecondsSchema.optional(),
  /**
   * Launch even when the fit check says the model does not fit in the memory free now
   * (the risk: swapping, a slow Mac, a runner killed for lack of memory).
   */
  acknowledgeMemory: z.boolean().default(false),
  /** The context length the fit check counts the KV cache at; defaults to DEFAULT_FIT_CONTEXT_TOKENS. */
  contextTokens: z.number().int().positive().max(10_000_000).optional(),
  /** This instance's runner schedule; absent: the setting `runner.schedule`. */
  schedule: RunnerScheduleSchema.optional(),
});
export type CreateInstanceRequest = z.input<typeof CreateInstanceRequestSchema>;

/** PATCH /api/instances/{id}: change the fast-synch override, which relaunches that runner. */
export const UpdateInstanceRequestSchema = z.strictObject({
  fastSynch: FastSynchOverrideSchema,
  /** What happens to the runner's requests before the relaunch. */
  mode: z.enum(['drain', 'cancel']).default('drain'),
  acknowledgeRisk: z.boolean().default(false),
});
export type UpdateInstanceRequest = z.input<typeof UpdateInstanceRequestSchema>;

/** POST /api/instances/{id}/residency: pin or unpin, or set the idle time to live (-1: never). */
export const ResidencyRequestSchema = z
  .strictObject({ pin: z.boolean().optional(), ttlSeconds: TtlSecondsSchema.optional() })
  .refine((body) => body.pin !== undefined || body.ttlSeconds !== undefined, { message: 'send "pin", "ttlSeconds" or both' });
export type ResidencyRequest = z.input<typeof ResidencyRequestSchema>;

/** POST /api/exo/attach: the exo node to attach to (tested first). */
export const ExoAttachRequestSchema = z.strictObject({ url: z.string().min(1).max(2048) });
export type ExoAttachRequest = z.input<typeof ExoAttachRequestSchema>;

/** What testing an exo address found (GET /api/exo/probe, and the attach's answer). */
export const ExoProbeAnswerSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    url: z.string(),
    nodeId: z.string(),
    /** Macs in exo's topology, when it said. */
    nodes: z.number().int().nonnegative().nullable(),
  }),
  z.object({ ok: z.literal(false), url: z.string(), error: z.string() }),
]);
export type ExoProbeAnswer = z.infer<typeof ExoProbeAnswerSchema>;

/** The safe pair launch plan (GET /api/launch/safe-pair). */
export interface SafePairPlanEntry {
  model: string;
  modelName: string;
  engine: Engine;
  simulated: boolean;
  instanceType: InstanceType;
  fastSynch: boolean;
  fastSynchReason: string;
  /**
   * The model's memory: what the launch adds when it starts a new instance (counted in
   * `memory.requiredBytes`): the fit check's need (weights plus KV cache) where the plan
   * was checked, else the catalog's figure.
   */
  memoryBytes: number;
  /** An instance of the model exists: the launch reuses it and adds no memory. */
  alreadyRunning: boolean;
  /**
   * The reused instance's lifecycle state (shared/instance-state.ts): "loading" is not
   * "serving" yet; null when the launch starts a new instance.
   */
  state: InstanceLifecycle | null;
}

export interface SafePairPlan {
  models: SafePairPlanEntry[];
  memory: {
    requiredBytes: number;
    freeBytes: number;
    headroomBytes: number;
    /**
     * On an exo cluster: each Mac the pair uses (or every Mac, when it uses none yet)
     * with its free memory from exo's state (`freeBytes` is their sum); absent locally.
     */
    byMac?: Array<{ nodeId: string; label: string; freeBytes: number }>;
  };
  /** Empty when the plan can run. */
  blockers: string[];
  canRun: boolean;
  /**
   * The fit check of the models the launch starts (weights plus KV cache against free
   * memory and the GPU's wired limit); its problems are among `blockers` when it does not
   * fit, and `acknowledgeMemory: true` launches anyway. Absent where no check was made.
   */
  fit?: FitCheck | null;
  /**
   * On an attached exo (electron/core/exo/launch/exo-safe-pair.ts adds its placements):
   * `fastSynchRisk` when both ring models would share a Mac's GPU with fast synch on or
   * assumed on; a launch that creates an instance then needs `acknowledgeRisk: true`.
   */
  exo?: {
    url: string;
    fastSynchRisk: { message: string; assumed: boolean } | null;
    /**
     * Set when exo did not answer the plan's questions: why, in words. The plan's models
     * and memory are then this Mac's alone, and `blockers` says the launch (which goes
     * to exo while it is attached) cannot run.
     */
    unavailable?: string;
  };
}

/** POST /api/launch/safe-pair's optional body. */
export const LaunchSafePairRequestSchema = z.strictObject({
  /** Launch even though the fit check says the pair does not fit in the memory free now (on exo: on a Mac it lands on). */
  acknowledgeMemory: z.boolean().default(false),
  /**
   * On an attached exo: launch even though both ring models would share a Mac's GPU with
   * fast synch on (or assumed on). The local pair runs its ring models with fast synch
   * off, so it has no such gate and ignores this.
   */
  acknowledgeRisk: z.boolean().default(false),
});

/** OpenAI's error shape; every error answer of the API uses it (clients read its words, code and count with readErrorAnswer, shared/action-client.ts). */
export const ApiErrorBodySchema = z.object({
  error: z.looseObject({ message: z.string(), type: z.string(), code: z.string().nullable(), param: z.string().nullable().optional() }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;

/** The menu bar title's choices (settings `menuBarTitle`). */
export const MenuBarTitleSchema = z.enum(['ttft', 'tokens_per_second', 'nothing']);
export type MenuBarTitle = z.infer<typeof MenuBarTitleSchema>;

/** Settings persisted by the app (and by `exobar serve` in its data directory). */
export const SettingsSchema = z.object({
  apiPort: z.number().int().min(0).max(65535).default(EXOBAR_API_PORT),
  defaultFastSynch: FastSynchOverrideSchema.default('auto'),
  startAtLogin: z.boolean().default(false),
  /**
   * What the menu bar title beside the icon shows after the number of models serving:
   * `ttft` the latest time to first token ("2 · 0.38s"), `tokens_per_second` the tokens
   * per second the models generate now ("2 · 41 tok/s"), `nothing` no title at all. Set
   * from the menu's "Menu bar title" entry.
   */
  menuBarTitle: MenuBarTitleSchema.default('ttft'),
  /**
   * The fit check (docs/fit-check.md). `headroomBytes`: memory kept free beside the
   * models on this Mac (2 GiB by default): raise it to keep room for other apps, and a
   * launch that would eat into it is refused with the figures ("launch anyway" passes it).
   */
  fit: z
    .strictObject({
      headroomBytes: z
        .number()
        .int()
        .min(0)
        .max(1024 ** 4)
        .default(2 * 1024 ** 3),
    })
    .default({ headroomBytes: 2 * 1024 ** 3 }),
  safePair: z.object({ small: z.string().min(1), medium: z.string().min(1) }).default({ small: 'sim/llama-3.2-1b', medium: 'sim/llama-3.2-3b' }),
  /** Path of a python with mlx-lm; null finds one automatically. */
  mlxPython: z.string().nullable().default(null),
  /**
   * Where the app keeps runner logs, the sim GPU and the API token; null uses the
   * folder the settings live in (the app's user data folder). `exobar serve` takes
   * its data directory from --data-dir instead.
   */
  dataDir: z.string().min(1).nullable().default(null),
  /**
   * Watchdog limits (docs/operations.md, "Watchdog"): the deadline for a runner's silence
   * adapts to its measured speed (expected step × safetyFactor, stretched while other
   * runners share the GPU), never below floorMs, never above the phase's ceiling
   * (prefillMs, decodeMs). lifecycleMs is the fixed limit while loading or warming up.
   */
  watchdog: z
    .strictObject({
      lifecycleMs: z.number().int().min(1000).max(3_600_000),
      prefillMs: z.number().int().min(1000).max(3_600_000),
      decodeMs: z.number().int().min(1000).max(3_600_000),
      floorMs: z.number().int().min(500).max(600_000),
      safetyFactor: z.number().min(1.5).max(100),
    })
    .partial()
    .default({}),
  /**
   * Debugging aids. `logGeneratedText`: keep generated text in each runner's stdout.log;
   * off by default, so prompts' answers never reach the disk (the log shows each token's
   * length instead).
   */
  debug: z.strictObject({ logGeneratedText: z.boolean().default(false) }).default({ logGeneratedText: false }),
  /**
   * Sharing this Mac's one GPU between models (docs/sharing-policy.md). `policy`: `off`,
   * or `decode_first`: while a neighbour streams, a prefilling runner is paced (smaller
   * chunks, a pause after each), its added prefill time bounded by a ceiling.
   */
  sharing: z.strictObject({ policy: SharingPolicySchema.default(DEFAULT_SHARING_POLICY) }).default({ policy: DEFAULT_SHARING_POLICY }),
  /**
   * `GET /metrics` (docs/metrics.md). `public: true` lets a scraper on this Mac read it
   * without the control token, and only while the server listens on a loopback address.
   */
  metrics: z.strictObject({ public: z.boolean().default(false) }).default({ public: false }),
  /**
   * exo: attach mode and this Mac's exo. `url` is the exo node whose HTTP API exobar
   * reads (e.g. http://127.0.0.1:52415; null attaches to nothing): `POST /api/exo/attach`
   * tests the address, then sets it; `exobar serve --exo URL` sets it for one run.
   * `command`, `args`, `env`: how exobar starts this Mac's exo when it does
   * (docs/exo-process.md; the command is `exo`, a path such as
   * EXO.app/Contents/Resources/exo/exo, or a wrapper). exobar sets `--api-port` and
   * fast synch itself.
   * `start: true` makes exobar start this Mac's exo when it starts (and stop it when it
   * quits); `apiPort` is the port it gives exo (exo's default 52415).
   * `hold` (on by default): while a model's runner prefills a request exobar proxies,
   * further requests to that model wait in exobar's queue and go to exo at that
   * prefill's first token, so exo's worker never waits on a busy runner's
   * acknowledgement (docs/exo-proxy.md).
   */
  exo: z
    .strictObject({
      url: z.string().min(1).max(2048).nullable().default(null),
      start: z.boolean().default(false),
      apiPort: z.number().int().min(1).max(65535).default(EXO_API_PORT),
      command: z.string().min(1).default('exo'),
      args: z.array(z.string()).max(100).default([]),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string()).default({}),
      hold: z.boolean().default(true),
      /**
       * A request for a model the attached exo has downloaded but not placed: off (the
       * default) answers 404 with how to place it; on, exobar places it through exo's
       * placement (ring, the fast-synch gate and the per-Mac fit check), holds the request
       * until its runners are ready, and deletes it after its idle time to live.
       */
      placeOnDemand: z.boolean().default(false),
      /**
       * The least time an exo runner may sit loading (connecting, loading with no new
       * layer, warming up) before exo_load_stalled: exo has no load timeout of its own
       * (exo PR #1889). The threshold grows from it with the model's size and the Mac's
       * measured load speed (electron/core/exo/load-stall/).
       */
      loadStallSeconds: z.number().int().min(10).max(86_400).default(120),
    })
    .default({ url: null, start: false, apiPort: EXO_API_PORT, command: 'exo', args: [], env: {}, hold: true, placeOnDemand: false, loadStallSeconds: 120 }),
  /**
   * Models on demand (docs/on-demand.md). `enabled`: a request for a catalog model that is
   * not running loads it (same gates as a launch). `idleTtlSeconds`: an idle instance
   * without a time to live of its own unloads after this long (-1: never). `maxModels`,
   * `maxBytes`: the most local instances resident, and the most bytes they hold by the
   * fit estimate; to load another, the least recently used idle unpinned one unloads
   * first (null: no cap but what fits).
   */
  onDemand: z
    .strictObject({
      enabled: z.boolean().default(true),
      // The one home of this default (30 minutes, LM Studio's and oMLX's order of magnitude): every other part reads it from here.
      idleTtlSeconds: TtlSecondsSchema.default(1800),
      maxModels: z.number().int().min(1).max(64).nullable().default(null),
      maxBytes: z.number().int().positive().nullable().default(null),
    })
    // The section's defaults are its fields' own (parsed from {}), not written a second time.
    .prefault({}),
  /**
   * How local runners serve (docs/runner-protocol.md, "Schedules"; docs/fit-check.md).
   * `schedule`: `interleaved` (every waiting request admitted at the next step, a long
   * prompt prefilled in chunks of about `prefillChunkMs` between the batch's decode steps)
   * or `exo` (exo's runner step for step); a launch may set another per instance.
   * `promptCacheBytes`: the cap of each runner's prompt cache (0: no cache; null: the
   * model's KV cache at the fit check's context length, the figure the fit check already
   * counts, so one full context of prefixes stays cached). A cap set here counts in the
   * fit check beside the KV cache; the default one is that KV figure, counted once.
   * Read at each runner's start.
   */
  runner: z
    .strictObject({
      schedule: RunnerScheduleSchema.default(DEFAULT_RUNNER_SCHEDULE),
      prefillChunkMs: z.number().int().min(MIN_PREFILL_CHUNK_MS).max(MAX_PREFILL_CHUNK_MS).default(DEFAULT_PREFILL_CHUNK_MS),
      promptCacheBytes: z
        .number()
        .int()
        .min(0)
        .max(1024 ** 4)
        .nullable()
        .default(null),
      /**
       * The least time a local runner may sit loading (starting, loading with no new layer,
       * warming up) before runner_load_stalled, as exo.loadStallSeconds is for exo's: the
       * threshold grows from it with the model's size over this Mac's measured load speed
       * (electron/core/node/load-stall/). Under the watchdog's 120 s for a silent load, so
       * the warning comes before the watchdog restarts the runner.
       */
      loadStallSeconds: z.number().int().min(10).max(86_400).default(60),
      /**
       * The timings sim runners take: null, each sim model's catalog figures; `cpu-tiny`,
       * the MLX runner's own measured on a tiny real model on the CPU (`npm run
       * calibrate-sim`), so the sim shows what real models do on such a machine. Read at
       * each sim runner's start; its card and /api/state show it.
       */
      simProfile: SimProfileNameSchema.nullable().default(null),
    })
    .prefault({}),
});
export type Settings = z.infer<typeof SettingsSchema>;

export function defaultSettings(): Settings {
  return SettingsSchema.parse({});
}
