/**
 * Where a Python for MLX may be on a Mac, for the app started from Finder or at
 * login as much as for `exobar serve` in a terminal. An app started by launchd gets
 * the system PATH (`/usr/bin:/bin:/usr/sbin:/sbin`), where `python3` is Apple's (3.9,
 * too old for mlx-lm) or, without the Command Line Tools, a stub that opens an
 * "install the command line developer tools" dialog each time it is run. So:
 *
 *   1. `python3` in each directory of this process's PATH, but not /usr/bin;
 *   2. Homebrew on Apple silicon (/opt/homebrew/bin), then /usr/local/bin (Intel
 *      Homebrew, and where the python.org installer links python3);
 *   3. the python.org framework (/Library/Frameworks/Python.framework), newest first;
 *   4. `python3` in the login shell's PATH (what .zprofile sets: `brew shellenv`,
 *      `pyenv init --path`), read once per process; not interactive-only settings
 *      (an interactive shell may prompt or hang);
 *   5. Apple's /usr/bin/python3, only when `xcode-select -p` says developer tools are
 *      installed (then it is a real Python, not the stub).
 *
 * Each candidate comes with why it was tried, so the Models panel can say which Python
 * was chosen and why. Candidates are produced lazily: the login shell is started only
 * when no earlier candidate worked.
 */
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { runCommand, type RunCommand } from './run-command';

export interface PythonCandidate {
  /** The interpreter to run. */
  python: string;
  /** Why it was tried, in words for the UI ("Homebrew", "python3 on your login shell's PATH"). */
  why: string;
}

export interface FindPythonOptions {
  env?: NodeJS.ProcessEnv;
  run?: RunCommand;
  exists?: (path: string) => boolean;
  /** Lists a directory (the python.org framework's versions); [] when it is not there. */
  list?: (dir: string) => string[];
  /** Resolves symlinks, to try each interpreter once. */
  realpath?: (path: string) => string;
  /** The login shell's PATH; default: read once from $SHELL (see {@link loginShellPath}). */
  loginPath?: () => Promise<string | null>;
  /** Told when a candidate is deliberately not tried (Apple's python3 without developer tools). */
  onSkip?: (note: string) => void;
  /** The OS; the Command Line Tools stub exists only on macOS, so elsewhere /usr/bin is searched like any PATH entry. */
  platform?: NodeJS.Platform;
}

export const HOMEBREW_DIRS = ['/opt/homebrew/bin', '/usr/local/bin'];
export const PYTHON_ORG_FRAMEWORK = '/Library/Frameworks/Python.framework/Versions';
export const APPLE_PYTHON = '/usr/bin/python3';

const MARK = '__EXOBAR_PATH__';

/** Reads PATH from a login shell (`$SHELL -l -c`), where Homebrew, pyenv and conda set it. Null when it cannot. */
export async function readLoginShellPath(env: NodeJS.ProcessEnv = process.env, run: RunCommand = runCommand): Promise<string | null> {
  const shell = env.SHELL && env.SHELL.startsWith('/') ? env.SHELL : '/bin/zsh';
  // Markers around the value: a profile that prints a greeting does not spoil it.
  const result = await run(shell, ['-l', '-c', `printf '%s%s%s' '${MARK}' "$PATH" '${MARK}'`], { timeoutMs: 5_000, env });
  const match = result.stdout.match(new RegExp(`${MARK}(.*?)${MARK}`, 's'));
  return match?.[1]?.trim() || null;
}

let cachedLoginPath: Promise<string | null> | null = null;

/** The login shell's PATH, read once per process (it costs a shell start-up). */
export function loginShellPath(): Promise<string | null> {
  cachedLoginPath ??= readLoginShellPath().catch(() => null);
  return cachedLoginPath;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** "3.12" > "3.9": python.org framework versions, newest first. */
function newestFirst(versions: string[]): string[] {
  const key = (v: string) => v.split('.').map((p) => Number.parseInt(p, 10) || 0);
  return versions
    .filter((v) => /^\d+\.\d+/.test(v))
    .sort((a, b) => {
      const [ka, kb] = [key(a), key(b)];
      return kb[0]! - ka[0]! || kb[1]! - ka[1]!;
    });
}

/** True when developer tools are installed, so /usr/bin/python3 is a real Python and not the installer stub. */
export async function developerToolsInstalled(run: RunCommand = runCommand, env?: NodeJS.ProcessEnv): Promise<boolean> {
  const result = await run('/usr/bin/xcode-select', ['-p'], { timeoutMs: 5_000, env });
  return result.code === 0 && result.stdout.trim() !== '';
}

/** The Python candidates in the order above, each existing file once; lazily. */
export async function* pythonCandidates(options: FindPythonOptions = {}): AsyncGenerator<PythonCandidate> {
  const env = options.env ?? process.env;
  const run = options.run ?? runCommand;
  const exists = options.exists ?? existsSync;
  const list = options.list ?? listDir;
  const realpath = options.realpath ?? realpathOr;
  const seen = new Set<string>();
  const mac = (options.platform ?? process.platform) === 'darwin';
  // On a Mac /usr/bin is left to the last step: its python3 may be the stub.
  const fresh = (python: string) => {
    if ((mac && python.startsWith('/usr/bin/')) || !exists(python)) return false;
    const real = realpath(python);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  };
  const inPath = (path: string | null | undefined) => (path ?? '').split(delimiter).filter((dir) => dir.startsWith('/'));

  for (const dir of inPath(env.PATH)) {
    const python = join(dir, 'python3');
    if (fresh(python)) yield { python, why: `python3 on PATH (${dir})` };
  }
  for (const dir of HOMEBREW_DIRS) {
    const python = join(dir, 'python3');
    const why = dir.startsWith('/opt/homebrew') ? 'Homebrew' : 'Homebrew (Intel) or the python.org installer, in /usr/local/bin';
    if (fresh(python)) yield { python, why };
  }
  for (const version of newestFirst(list(PYTHON_ORG_FRAMEWORK))) {
    const python = join(PYTHON_ORG_FRAMEWORK, version, 'bin', 'python3');
    if (fresh(python)) yield { python, why: `the python.org installer (Python ${version})` };
  }
  const login = await (options.loginPath ?? loginShellPath)();
  for (const dir of inPath(login)) {
    const python = join(dir, 'python3');
    if (fresh(python)) yield { python, why: `python3 on your login shell's PATH (${dir})` };
  }
  if (!mac || !exists(APPLE_PYTHON)) return;
  if (await developerToolsInstalled(run, env)) yield { python: APPLE_PYTHON, why: "Apple's python3 (developer tools are installed)" };
  else options.onSkip?.(`${APPLE_PYTHON} was not tried: without the Command Line Tools it only opens a dialog to install them`);
}

/** The version check "Set up MLX runtime" needs of the Python that creates the venv. */
export const VENV_BASE_CHECK = 'import sys, venv; print("%d.%d.%d" % sys.version_info[:3])';

/**
 * The first candidate that is Python 3.10 or later with the venv module: the one
 * "Set up MLX runtime" creates its venv with when settings name none. Null when none is.
 */
export async function findVenvBasePython(options: FindPythonOptions = {}): Promise<PythonCandidate | null> {
  const run = options.run ?? runCommand;
  for await (const candidate of pythonCandidates(options)) {
    const result = await run(candidate.python, ['-c', VENV_BASE_CHECK], { timeoutMs: 30_000, env: options.env });
    const [major = 0, minor = 0] = result.stdout
      .trim()
      .split('.')
      .map((p) => Number.parseInt(p, 10) || 0);
    if (result.code === 0 && (major > 3 || (major === 3 && minor >= 10))) return candidate;
  }
  return null;
}

/** For tests: forget the login shell's PATH read by {@link loginShellPath}. */
export function resetLoginShellPath(): void {
  cachedLoginPath = null;
}
