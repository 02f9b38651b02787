/**
 * Finds a Python that can run the MLX runner: macOS on Apple silicon (Metal) or Linux
 * (CPU), Python 3.10+, mlx and mlx-lm importable, mlx-lm in the runner's supported range.
 *
 * Where it looks, in order: the `mlxPython` path from settings (when set, only that
 * one: an explicit choice that does not work is reported, not silently replaced), else
 * the venv exobar's "Set up MLX runtime" creates in the data directory, else where
 * Python really is on a Mac (find-python.ts: PATH, Homebrew, python.org, the login
 * shell's PATH; Apple's python3 only with developer tools installed). Each candidate
 * is run with a tiny import check, never imported into Node. The reason says which
 * Python was chosen and why, for the Models panel.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { pythonCandidates, type FindPythonOptions, type PythonCandidate } from './find-python';
import { mlxPlatform, type MlxDevice } from './mlx-platform';
import { runCommand, type RunCommand } from './run-command';

/**
 * The mlx-lm releases the runner supports (exobar_mlx/versions.py says the same): its
 * batch API and cache classes were checked against 0.32; the runner refuses others at start.
 */
export const MIN_MLX_LM_VERSION = '0.32.0';
export const MAX_MLX_LM_VERSION_EXCLUSIVE = '0.33.0';
export const MIN_PYTHON_VERSION = '3.10.0';
/** The venv "Set up MLX runtime" creates, relative to the data directory. */
export const MLX_VENV_DIR = 'mlx-venv';

export interface MlxRuntimeStatus {
  available: boolean;
  /** The interpreter to run the runner with (sys.executable of the working candidate). */
  python: string | null;
  /** mlx-lm's version, when found. */
  version: string | null;
  /** MLX's own version, when found. */
  mlxVersion?: string | null;
  /** Where MLX computes here (null when unavailable): Metal on a Mac, the CPU on Linux. */
  device?: MlxDevice | null;
  /** Why it is (un)available, in words for the UI. */
  reason: string;
  /** Every candidate tried, why it was tried, and what was wrong with it (diagnostics). */
  candidates: { python: string; why?: string; problem: string | null }[];
}

export interface DetectMlxRuntimeOptions {
  dataDir: string;
  /** `settings.mlxPython`. */
  settingsPython?: string | null;
  platform?: NodeJS.Platform;
  arch?: string;
  run?: RunCommand;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Where to look beyond settings and the venv (tests inject a file system). */
  find?: Omit<FindPythonOptions, 'run' | 'env' | 'onSkip'>;
}

/** The venv's interpreter inside a data directory. */
export function mlxVenvPython(dataDir: string): string {
  return join(dataDir, MLX_VENV_DIR, 'bin', 'python3');
}

const PROBE = [
  'import json, sys',
  'out = {"python": sys.executable, "pythonVersion": "%d.%d.%d" % sys.version_info[:3]}',
  'try:',
  '    import mlx.core as mx',
  '    import mlx_lm',
  '    out.update(ok=True, mlx=getattr(mx, "__version__", None), mlxLm=getattr(mlx_lm, "__version__", None))',
  'except Exception as err:',
  '    out.update(ok=False, error="%s: %s" % (type(err).__name__, err))',
  'print(json.dumps(out))',
].join('\n');

const ProbeSchema = z.object({
  python: z.string(),
  pythonVersion: z.string(),
  ok: z.boolean(),
  mlx: z.string().nullable().optional(),
  mlxLm: z.string().nullable().optional(),
  error: z.string().optional(),
});

/** Compares dotted versions numerically ("0.30.10" > "0.30.4"); non-numeric parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((p) => Number.parseInt(p, 10) || 0);
  const pb = b.split(/[.+-]/).map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

type Probe = { ok: true; python: string; version: string; mlxVersion: string | null } | { ok: false; problem: string };

async function probe(python: string, run: RunCommand, timeoutMs: number, env?: NodeJS.ProcessEnv): Promise<Probe> {
  const result = await run(python, ['-c', PROBE], { timeoutMs, env });
  if (result.code === null) return { ok: false, problem: `could not run it (${result.error ?? 'no exit code'})` };
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    const detail = (result.stderr.trim().split('\n').at(-1) ?? '').slice(0, 200);
    return { ok: false, problem: `it is not a working Python (exit ${result.code}${detail ? `: ${detail}` : ''})` };
  }
  const parsed = ProbeSchema.safeParse(json);
  if (!parsed.success) return { ok: false, problem: 'its import check printed something unexpected' };
  const p = parsed.data;
  if (compareVersions(p.pythonVersion, MIN_PYTHON_VERSION) < 0) {
    return { ok: false, problem: `Python ${p.pythonVersion} is too old (the runner needs ${MIN_PYTHON_VERSION} or later)` };
  }
  if (!p.ok) return { ok: false, problem: `mlx-lm is not importable (${p.error ?? 'unknown error'})` };
  const version = p.mlxLm ?? 'unknown';
  if (version !== 'unknown' && compareVersions(version, MIN_MLX_LM_VERSION) < 0) {
    return {
      ok: false,
      problem: `mlx-lm ${version} is too old (the runner supports ${MIN_MLX_LM_VERSION} up to, not including, ${MAX_MLX_LM_VERSION_EXCLUSIVE})`,
    };
  }
  if (version !== 'unknown' && compareVersions(version, MAX_MLX_LM_VERSION_EXCLUSIVE) >= 0) {
    return {
      ok: false,
      problem: `mlx-lm ${version} is newer than the runner supports (below ${MAX_MLX_LM_VERSION_EXCLUSIVE}); run Set up MLX runtime to install the supported release`,
    };
  }
  return { ok: true, python: p.python, version, mlxVersion: p.mlx ?? null };
}

/** The venv first (it exists once "Set up MLX runtime" ran), then what find-python.ts finds. */
async function* discovered(dataDir: string, find: FindPythonOptions): AsyncGenerator<PythonCandidate> {
  const venv = mlxVenvPython(dataDir);
  if ((find.exists ?? existsSync)(venv)) yield { python: venv, why: 'the venv "Set up MLX runtime" made' };
  yield* pythonCandidates(find);
}

/**
 * Detects the MLX runtime. Never throws: every problem becomes `available: false`
 * with a reason the UI can show next to "Set up MLX runtime".
 */
export async function detectMlxRuntime(options: DetectMlxRuntimeOptions): Promise<MlxRuntimeStatus> {
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const where = mlxPlatform(platform, arch);
  if (!where.supported) {
    return { available: false, python: null, version: null, device: null, reason: where.reason, candidates: [] };
  }
  const run = options.run ?? runCommand;
  // A bound for a hung interpreter: importing mlx-lm (and transformers) took over 30 s on a
  // loaded 2-core machine, and a slow probe must not read as "no runtime".
  const timeoutMs = options.timeoutMs ?? 120_000;
  const explicit = options.settingsPython?.trim() || null;
  const skipped: string[] = [];
  const candidates = explicit
    ? [{ python: explicit, why: 'set in settings (mlxPython)' }]
    : discovered(options.dataDir, { platform, ...options.find, run, env: options.env, onSkip: (note) => skipped.push(note) });
  const tried: MlxRuntimeStatus['candidates'] = [];
  for await (const { python, why } of candidates) {
    const result = await probe(python, run, timeoutMs, options.env);
    if (result.ok) {
      tried.push({ python, why, problem: null });
      const via = python === result.python ? '' : ` via ${python}`;
      return {
        available: true,
        python: result.python,
        version: result.version,
        mlxVersion: result.mlxVersion,
        device: where.device,
        reason: `mlx-lm ${result.version} found in ${result.python}${via}, chosen as ${why} (${where.device === 'metal' ? 'Metal' : 'CPU'})`,
        candidates: tried,
      };
    }
    tried.push({ python, why, problem: result.problem });
  }
  if (explicit) {
    return {
      available: false,
      python: null,
      version: null,
      device: null,
      reason: `The Python set in settings (${explicit}) cannot run MLX: ${tried[0]!.problem}.`,
      candidates: tried,
    };
  }
  const looked =
    tried.length > 0
      ? tried.map((t) => `${t.python} (${t.why}): ${t.problem}`).join('; ')
      : "no Python 3 in Homebrew, /usr/local/bin, python.org or your login shell's PATH";
  const reason = `No Python with mlx-lm found (${[looked, ...skipped].join('; ')}). Use "Set up MLX runtime", or set mlxPython in settings.`;
  return { available: false, python: null, version: null, device: null, reason, candidates: tried };
}
