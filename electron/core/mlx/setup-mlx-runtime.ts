/**
 * "Set up MLX runtime": a private venv in `<dataDir>/mlx-venv` with the pinned mlx and
 * mlx-lm installed (mlx-platform.ts: Metal wheels on a Mac, `mlx[cpu]` on Linux), so the
 * MLX runner never depends on (or changes) the user's own Python packages. CI makes its
 * MLX venv with this same function (setup-mlx-runtime-cli.ts).
 *
 * Steps, each reported to `onProgress` together with pip's output lines as they come:
 * check the platform, check the base Python, create the venv (kept if it already
 * exists), upgrade pip, install mlx-lm, verify with detectMlxRuntime. A failure throws
 * an {@link MlxSetupError} naming the step, the exit status and pip's last lines.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findVenvBasePython } from './find-python';
import { detectMlxRuntime, MLX_VENV_DIR, mlxVenvPython, type MlxRuntimeStatus } from './detect-mlx-runtime';
import { mlxPlatform } from './mlx-platform';
import { runCommand, streamCommand, type RunCommand, type StreamCommand } from './run-command';

export type MlxSetupStep = 'check-platform' | 'check-python' | 'create-venv' | 'upgrade-pip' | 'install-mlx-lm' | 'verify' | 'done';

export interface MlxSetupProgress {
  step: MlxSetupStep;
  /** What is happening, for the UI's status line. */
  message: string;
  /** One line of the command's output, when this event carries one. */
  line?: string;
  stream?: 'stdout' | 'stderr';
}

export class MlxSetupError extends Error {
  constructor(
    readonly step: MlxSetupStep,
    message: string,
    /** The command's last output lines (pip's explanation is usually there). */
    readonly outputTail: string[] = [],
  ) {
    super(message);
    this.name = 'MlxSetupError';
  }
}

export interface SetupMlxRuntimeOptions {
  dataDir: string;
  /** The Python that creates the venv (settings.mlxPython); else the first Python 3.10+ find-python.ts finds. */
  basePython?: string | null;
  /** Finds the Python to create the venv with when settings name none (tests replace it). */
  findBasePython?: () => Promise<string | null>;
  onProgress: (progress: MlxSetupProgress) => void;
  /** What pip installs; default the pinned mlx and mlx-lm for this platform (mlxPlatform). */
  packages?: string[];
  platform?: NodeJS.Platform;
  arch?: string;
  run?: RunCommand;
  stream?: StreamCommand;
  exists?: (path: string) => boolean;
  env?: NodeJS.ProcessEnv;
  /** pip may download hundreds of MB: generous. */
  installTimeoutMs?: number;
}

const TAIL_LINES = 20;

/**
 * Creates (or updates) the venv and installs mlx-lm into it. Resolves with the
 * detected runtime (available); rejects with an {@link MlxSetupError}.
 */
export async function setupMlxRuntime(options: SetupMlxRuntimeOptions): Promise<MlxRuntimeStatus> {
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const run = options.run ?? runCommand;
  const stream = options.stream ?? streamCommand;
  const exists = options.exists ?? existsSync;
  // Not a bare `python3`: from Finder that is Apple's (too old) or the developer tools' install stub.
  const findBase = options.findBasePython ?? (async () => (await findVenvBasePython({ run, env: options.env, platform }))?.python ?? null);
  const basePython = options.basePython?.trim() || (await findBase()) || 'python3';
  const venvDir = join(options.dataDir, MLX_VENV_DIR);
  const venvPython = mlxVenvPython(options.dataDir);
  const installTimeoutMs = options.installTimeoutMs ?? 30 * 60_000;
  const env: NodeJS.ProcessEnv = {
    ...(options.env ?? process.env),
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PIP_NO_INPUT: '1',
    PYTHONUNBUFFERED: '1',
  };
  const progress = options.onProgress;

  progress({ step: 'check-platform', message: 'Checking that MLX runs here (Apple silicon, or Linux on the CPU)' });
  const where = mlxPlatform(platform, arch);
  if (!where.supported) throw new MlxSetupError('check-platform', where.reason);
  const packages = options.packages ?? where.packages;

  progress({ step: 'check-python', message: `Checking ${basePython}` });
  const version = await run(basePython, ['-c', 'import sys, venv; print("%d.%d.%d" % sys.version_info[:3])'], { timeoutMs: 30_000, env });
  if (version.code !== 0) {
    const why = version.code === null ? (version.error ?? 'it did not run') : lastLine(version.stderr) || `exit ${version.code}`;
    throw new MlxSetupError(
      'check-python',
      `${basePython} cannot create a venv (${why}). Install Python 3.10 or later (for example from python.org or Homebrew) or set its path in settings.`,
      tail(version.stderr),
    );
  }
  const found = version.stdout.trim();
  const [major = 0, minor = 0] = found.split('.').map((p) => Number.parseInt(p, 10) || 0);
  if (major < 3 || (major === 3 && minor < 10)) {
    throw new MlxSetupError('check-python', `${basePython} is Python ${found}; mlx-lm needs Python 3.10 or later.`);
  }

  if (exists(venvPython)) {
    progress({ step: 'create-venv', message: `Reusing the venv in ${venvDir}` });
  } else {
    progress({ step: 'create-venv', message: `Creating a venv in ${venvDir}` });
    await streamed('create-venv', basePython, ['-m', 'venv', venvDir], 5 * 60_000);
  }

  progress({ step: 'upgrade-pip', message: 'Upgrading pip in the venv' });
  await streamed('upgrade-pip', venvPython, ['-m', 'pip', 'install', '--upgrade', '--progress-bar', 'off', 'pip'], installTimeoutMs);

  progress({ step: 'install-mlx-lm', message: `Installing ${packages.join(' ')} (this downloads MLX and its dependencies)` });
  await streamed('install-mlx-lm', venvPython, ['-m', 'pip', 'install', '--upgrade', '--progress-bar', 'off', ...packages], installTimeoutMs);

  progress({ step: 'verify', message: 'Checking that mlx-lm imports' });
  const status = await detectMlxRuntime({ dataDir: options.dataDir, settingsPython: venvPython, platform, arch, run, env });
  if (!status.available) {
    throw new MlxSetupError('verify', `mlx-lm was installed but does not work: ${status.reason}`);
  }
  progress({ step: 'done', message: `MLX runtime ready: mlx-lm ${status.version}` });
  return status;

  async function streamed(step: MlxSetupStep, command: string, args: string[], timeoutMs: number): Promise<void> {
    const lines: string[] = [];
    const result = await stream(command, args, {
      timeoutMs,
      env,
      onLine: (s, line) => {
        lines.push(line);
        if (lines.length > TAIL_LINES) lines.shift();
        progress({ step, message: line, line, stream: s });
      },
    });
    if (result.code === 0) return;
    const status = result.code === null ? (result.error ?? 'did not finish') : `exit code ${result.code}`;
    const hint = step === 'install-mlx-lm' || step === 'upgrade-pip' ? pipHint(lines) : '';
    throw new MlxSetupError(step, `${[command, ...args].join(' ')} failed (${status}).${hint}`, lines);
  }
}

function pipHint(lines: readonly string[]): string {
  const text = lines.join('\n');
  if (/Could not find a version|No matching distribution/i.test(text)) {
    return ' pip found no MLX for this Python: it needs Python 3.10 or later on macOS with Apple silicon, or on Linux with glibc 2.35 or later.';
  }
  if (/Failed to establish a new connection|Temporary failure in name resolution|ConnectionError|timed out/i.test(text)) {
    return ' pip could not reach the package index: check the network connection and try again.';
  }
  if (/No space left on device/i.test(text)) return ' The disk is full.';
  return lines.length > 0 ? ` Last output: ${lines.at(-1)}` : '';
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}

function tail(text: string): string[] {
  return text.trim().split('\n').filter(Boolean).slice(-TAIL_LINES);
}
