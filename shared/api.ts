/**
 * Shapes crossing the control boundary (HTTP control API and Electron IPC alike),
 * with the schemas that validate them. One schema library (zod) for every boundary.
 */
import { z } from 'zod';

export const InstanceTypeSchema = z.enum(['ring', 'jaccl']);
export const FastSynchOverrideSchema = z.enum(['auto', 'on', 'off']);

/** POST /api/instances */
export const CreateInstanceRequestSchema = z.strictObject({
  model: z.string().min(1).max(300),
  instanceType: InstanceTypeSchema.default('ring'),
  fastSynch: FastSynchOverrideSchema.default('auto'),
  /** Required to create an instance that would put two ring runners with fast synch on one GPU. */
  acknowledgeRisk: z.boolean().default(false),
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

/** The safe pair launch plan (GET /api/launch/safe-pair). */
export interface SafePairPlanEntry {
  model: string;
  modelName: string;
  engine: 'sim' | 'mlx';
  simulated: boolean;
  instanceType: 'ring' | 'jaccl';
  fastSynch: boolean;
  fastSynchReason: string;
  memoryBytes: number;
  /** Already running: the launch reuses it. */
  alreadyRunning: boolean;
}

export interface SafePairPlan {
  models: SafePairPlanEntry[];
  memory: { requiredBytes: number; freeBytes: number; headroomBytes: number };
  /** Empty when the plan can run. */
  blockers: string[];
  canRun: boolean;
}

/** OpenAI's error shape; every error answer of the API uses it. */
export interface ApiErrorBody {
  error: { message: string; type: string; code: string | null; param?: string | null };
}

/** Settings persisted by the app (and by `exobar serve` in its data directory). */
export const SettingsSchema = z.object({
  apiPort: z.number().int().min(0).max(65535).default(52416),
  defaultFastSynch: FastSynchOverrideSchema.default('auto'),
  startAtLogin: z.boolean().default(false),
  safePair: z
    .object({ small: z.string().min(1), medium: z.string().min(1) })
    .default({ small: 'sim/llama-3.2-1b', medium: 'sim/llama-3.2-3b' }),
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
   * This Mac's exo when exobar starts it (docs/exo-process.md): the command (`exo`, a
   * path such as EXO.app/Contents/Resources/exo/exo, or a wrapper), extra arguments and
   * extra environment. exobar sets `--api-port` and fast synch itself.
   */
  exo: z
    .strictObject({
      command: z.string().min(1).default('exo'),
      args: z.array(z.string()).max(100).default([]),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string()).default({}),
    })
    .default({ command: 'exo', args: [], env: {} }),
});
export type Settings = z.infer<typeof SettingsSchema>;

export function defaultSettings(): Settings {
  return SettingsSchema.parse({});
}
