/**
 * Command-line arguments of the sim runner:
 * `--model <sim catalog id> [--time-scale X]` (also `--flag=value`).
 */
import { findSimModel, SIM_MODELS, type CatalogModel, type SimTimings } from '../../../shared/catalog';

export interface SimRunnerArgs {
  model: CatalogModel & { sim: SimTimings };
  /** Every simulated duration is multiplied by this (tests run at 0.05-0.25). */
  timeScale: number;
}

export type ParseArgsResult = { ok: true; value: SimRunnerArgs } | { ok: false; error: string };

export const USAGE = 'usage: node out/main/sim-runner.cjs --model <sim model id> [--time-scale <number > 0>]';

/** Parses argv (without node and the script). Never throws: bad input is a clear message. */
export function parseSimRunnerArgs(argv: readonly string[]): ParseArgsResult {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    if (name !== '--model' && name !== '--time-scale') return { ok: false, error: `unknown argument "${arg}"` };
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
  return { ok: true, value: { model: { ...model, sim: model.sim }, timeScale } };
}
