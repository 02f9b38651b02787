/**
 * The spawn spec of an MLX runner process (electron/runners/mlx/runner.py).
 *
 * The fast-synch decision is carried in the environment at spawn, both variables set
 * consistently (shared/fast-synch-policy.ts): MLX reads MLX_METAL_FAST_SYNCH once per
 * process, and the runner's bootstrap lets EXO_FAST_SYNCH override it, as exo's does.
 * HF_HUB_OFFLINE=1 makes sure no code path in mlx-lm or huggingface_hub ever starts a
 * download: a model that is not on disk is an error, not a multi-gigabyte surprise.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { fastSynchEnv } from '../../../shared/fast-synch-policy';
import { MAX_PREFILL_CHUNK_MS, MIN_PREFILL_CHUNK_MS, runnerEngineArgs, RunnerScheduleSchema } from '../../../shared/runner-protocol';
import { resolveMlxRunnerDir } from '../runner-entry';

/**
 * runner.py in the MLX runner's directory: `$EXOBAR_MLX_RUNNER_DIR` (the packaged app's
 * resources) or the source tree (resolveMlxRunnerDir).
 */
export function defaultMlxRunnerScript(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveMlxRunnerDir(env), 'runner.py');
}

const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative().finite();

/** Timings of the runner's deterministic `test` engine, seconds at time scale 1 (flags of the same name). */
export const MlxTestEngineTimingsSchema = z
  .object({
    admitOverheadS: nonNegative,
    prefillFixedS: nonNegative,
    prefillTokensPerS: z.number().positive().finite(),
    decodeStepS: nonNegative,
    batchStepGrowth: nonNegative,
    totalLayers: positiveInt,
    loadS: nonNegative,
    warmupS: nonNegative,
  })
  .partial();
export type MlxTestEngineTimings = z.infer<typeof MlxTestEngineTimingsSchema>;

export const MlxRunnerCommandOptionsSchema = z.object({
  /** The Python with mlx-lm (detectMlxRuntime's `python`). */
  python: z.string().min(1),
  /** A local model directory or a Hugging Face repo id already on disk (CatalogModel.path for scanned models). */
  model: z.string().min(1),
  /** Path of runner.py; default {@link defaultMlxRunnerScript}. */
  runnerScript: z.string().min(1).optional(),
  engine: z.enum(['mlx', 'test']).default('mlx'),
  /** exo's defaults: 4096-token prefill chunks, 8 requests per decode batch. */
  prefillChunk: positiveInt.optional(),
  maxBatch: positiveInt.optional(),
  /** The schedule, prefill chunk ms and prompt cache cap (runnerEngineArgs); absent: the runner's defaults. */
  engineOptions: z
    .object({
      schedule: RunnerScheduleSchema,
      prefillChunkMs: z.number().int().min(MIN_PREFILL_CHUNK_MS).max(MAX_PREFILL_CHUNK_MS),
      promptCacheBytes: z.number().int().nonnegative(),
    })
    .optional(),
  /** Generation cap when a request sets no maxTokens. */
  defaultMaxTokens: positiveInt.optional(),
  /**
   * mlx engine: this runner's share of the GPU working set in bytes (mlxWiredLimitShares),
   * set as MLX's wired limit on Metal; the runner ignores it on the CPU and says so.
   */
  wiredLimitBytes: positiveInt.optional(),
  /** Test engine only: every simulated duration is multiplied by this. */
  timeScale: z.number().positive().max(1000).optional(),
  testTimings: MlxTestEngineTimingsSchema.optional(),
  /**
   * The policy's decision (decideFastSynch), or `null` to leave both variables unset.
   * The app's runtime service passes null: the node sets the policy's variables over
   * the spawn spec (fastSynchEnv) when it spawns, so every launch still decides.
   */
  fastSynch: z.boolean().nullable(),
  /** The environment to start from; defaults to this process's. */
  baseEnv: z.record(z.string(), z.string().optional()).optional(),
  /** Applied last; an undefined value removes the variable. */
  extraEnv: z.record(z.string(), z.string().optional()).optional(),
});
export type MlxRunnerCommandOptions = z.input<typeof MlxRunnerCommandOptionsSchema>;

/** What to spawn: the command is python itself (never a shell), so the hello's pid is the child's pid. */
export interface MlxRunnerCommand {
  command: string;
  args: string[];
  /** The complete environment; undefined values are left out when spawning. */
  env: Record<string, string | undefined>;
}

const TIMING_FLAGS: Record<keyof MlxTestEngineTimings, string> = {
  admitOverheadS: '--admit-overhead-s',
  prefillFixedS: '--prefill-fixed-s',
  prefillTokensPerS: '--prefill-tps',
  decodeStepS: '--decode-step-s',
  batchStepGrowth: '--batch-step-growth',
  totalLayers: '--total-layers',
  loadS: '--load-s',
  warmupS: '--warmup-s',
};

/**
 * Builds the spawn spec of an MLX runner. Throws a readable error for bad options
 * (they come from settings and the catalog, so they are validated here).
 */
export function mlxRunnerCommand(options: MlxRunnerCommandOptions): MlxRunnerCommand {
  const parsed = MlxRunnerCommandOptionsSchema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid MLX runner options: ${z.prettifyError(parsed.error)}`);
  const o = parsed.data;

  const args = [o.runnerScript ?? defaultMlxRunnerScript(), '--model', o.model, '--engine', o.engine];
  if (o.prefillChunk !== undefined) args.push('--prefill-chunk', String(o.prefillChunk));
  if (o.maxBatch !== undefined) args.push('--max-batch', String(o.maxBatch));
  if (o.engineOptions !== undefined) args.push(...runnerEngineArgs(o.engineOptions));
  if (o.defaultMaxTokens !== undefined) args.push('--default-max-tokens', String(o.defaultMaxTokens));
  if (o.wiredLimitBytes !== undefined) {
    if (o.engine !== 'mlx') throw new Error('invalid MLX runner options: wiredLimitBytes only applies to the mlx engine');
    args.push('--wired-limit-bytes', String(o.wiredLimitBytes));
  }
  if (o.engine === 'test') {
    if (o.timeScale !== undefined) args.push('--time-scale', String(o.timeScale));
    for (const [key, flag] of Object.entries(TIMING_FLAGS) as [keyof MlxTestEngineTimings, string][]) {
      const value = o.testTimings?.[key];
      if (value !== undefined) args.push(flag, String(value));
    }
  } else if (o.timeScale !== undefined || o.testTimings !== undefined) {
    throw new Error('invalid MLX runner options: timeScale and testTimings only apply to the test engine');
  }

  const env: Record<string, string | undefined> = { ...(o.baseEnv ?? process.env) };
  // Only the policy's decision may reach the runner, never an inherited value.
  delete env.MLX_METAL_FAST_SYNCH;
  delete env.EXO_FAST_SYNCH;
  if (o.fastSynch !== null) Object.assign(env, fastSynchEnv(o.fastSynch));
  Object.assign(env, {
    HF_HUB_OFFLINE: '1',
    TRANSFORMERS_OFFLINE: '1',
    // Protocol lines are flushed by the runner itself; this keeps its log timely too.
    PYTHONUNBUFFERED: '1',
    // A packaged app's resources are read-only: no .pyc files next to runner.py.
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONIOENCODING: 'utf-8',
  });
  for (const [key, value] of Object.entries(o.extraEnv ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return { command: o.python, args, env };
}
