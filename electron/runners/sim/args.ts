/**
 * Command-line arguments of the sim runner:
 * `--model <sim catalog id> [--time-scale X] [--schedule exo|interleaved]
 *  [--prefill-chunk-ms N] [--prompt-cache-bytes N] [--profile cpu-tiny]` (also `--flag=value`).
 * `--schedule`, `--prefill-chunk-ms` and `--prompt-cache-bytes` are every runner's
 * (shared/runner-protocol.ts, runnerEngineArgs); `--profile` is the sim's own: the model's
 * timings replaced by a calibrated profile's (sim-profiles.ts).
 */
import { findSimModel, SIM_MODELS, type CatalogModel, type SimTimings } from '../../../shared/catalog';
import {
  DEFAULT_PREFILL_CHUNK_MS,
  DEFAULT_RUNNER_SCHEDULE,
  MAX_PREFILL_CHUNK_MS,
  MIN_PREFILL_CHUNK_MS,
  RunnerScheduleSchema,
  type RunnerEngineOptions,
  type SimProfileName,
} from '../../../shared/runner-protocol';
import { isSimProfileName, SIM_PROFILES, withSimProfile } from './sim-profiles';

export interface SimRunnerArgs extends RunnerEngineOptions {
  model: CatalogModel & { sim: SimTimings };
  /** The calibrated profile whose timings replaced the model's (`--profile`), or null. */
  profile: SimProfileName | null;
  /** Every simulated duration is multiplied by this (tests run at 0.05-0.25). */
  timeScale: number;
}

export type ParseArgsResult = { ok: true; value: SimRunnerArgs } | { ok: false; error: string };

export const USAGE =
  'usage: node out/main/sim-runner.cjs --model <sim model id> [--time-scale <number > 0>] ' +
  '[--schedule exo|interleaved] [--prefill-chunk-ms <ms>] [--prompt-cache-bytes <bytes, 0 = off>] ' +
  `[--profile ${Object.keys(SIM_PROFILES).join('|')}]`;

const FLAGS = new Set(['--model', '--time-scale', '--schedule', '--prefill-chunk-ms', '--prompt-cache-bytes', '--profile']);

/** Parses argv (without node and the script). Never throws: bad input is a clear message. */
export function parseSimRunnerArgs(argv: readonly string[]): ParseArgsResult {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (!FLAGS.has(name)) return { ok: false, error: `unknown argument "${arg}"` };
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else value = argv[++i];
    if (value === undefined || value === '') return { ok: false, error: `${name} needs a value` };
    values.set(name, value);
  }
  const modelId = values.get('--model');
  if (modelId === undefined) return { ok: false, error: '--model is required' };
  const model = findSimModel(modelId);
  if (!model || !model.sim) {
    const known = SIM_MODELS.map((m) => m.id).join(', ');
    return { ok: false, error: `unknown sim model "${modelId}" (known: ${known})` };
  }
  let timeScale = 1;
  const rawScale = values.get('--time-scale');
  if (rawScale !== undefined) {
    timeScale = Number(rawScale);
    if (!Number.isFinite(timeScale) || timeScale <= 0 || timeScale > 1000) {
      return { ok: false, error: `--time-scale must be a number in (0, 1000], got "${rawScale}"` };
    }
  }
  const schedule = RunnerScheduleSchema.safeParse(values.get('--schedule') ?? DEFAULT_RUNNER_SCHEDULE);
  if (!schedule.success) return { ok: false, error: `--schedule must be exo or interleaved, got "${values.get('--schedule')}"` };
  const prefillChunkMs = Number(values.get('--prefill-chunk-ms') ?? DEFAULT_PREFILL_CHUNK_MS);
  if (!Number.isInteger(prefillChunkMs) || prefillChunkMs < MIN_PREFILL_CHUNK_MS || prefillChunkMs > MAX_PREFILL_CHUNK_MS) {
    return { ok: false, error: `--prefill-chunk-ms must be an integer in [${MIN_PREFILL_CHUNK_MS}, ${MAX_PREFILL_CHUNK_MS}], got "${values.get('--prefill-chunk-ms')}"` };
  }
  const promptCacheBytes = Number(values.get('--prompt-cache-bytes') ?? 0);
  if (!Number.isSafeInteger(promptCacheBytes) || promptCacheBytes < 0) {
    return { ok: false, error: `--prompt-cache-bytes must be a whole number of bytes (0: no cache), got "${values.get('--prompt-cache-bytes')}"` };
  }
  const profile = values.get('--profile');
  if (profile !== undefined && !isSimProfileName(profile)) {
    return { ok: false, error: `--profile must be one of ${Object.keys(SIM_PROFILES).join(', ')}, got "${profile}"` };
  }
  const sim = profile === undefined ? model.sim : withSimProfile(model.sim, SIM_PROFILES[profile]);
  return {
    ok: true,
    value: { model: { ...model, sim }, profile: profile ?? null, timeScale, schedule: schedule.data, prefillChunkMs, promptCacheBytes },
  };
}
