/**
 * exo's files on this machine: the folder holding its log and its pidfile, by exo's
 * own rules (exo 0.3.70, src/exo/shared/constants.py), its pidfile and its log. exo holds `exo.pid` with flock for as long as it lives, so
 * the lock is free once the pid written in it is no longer a live process (the kernel
 * drops a flock when its holder dies, even by SIGKILL).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where this exo keeps its files (exo's EXO_CACHE_HOME: `exo_log/` and `exo.pid`), as
 * exo computes it: `$HOME/$EXO_HOME` when EXO_HOME is set (relative to HOME; an
 * absolute one wins), else `~/.exo` off Linux, else on Linux the XDG cache folder
 * (`$XDG_CACHE_HOME/exo`, default `~/.cache/exo`). The environment and platform are
 * exo's own (the child's), not necessarily exobar's.
 */
export function exoHomeDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  return exoXdgDir(env, platform, 'XDG_CACHE_HOME', '.cache');
}

/**
 * exo's data folder (EXO_DATA_HOME), by the same rules with the XDG data folder on
 * Linux (`$XDG_DATA_HOME/exo`, default `~/.local/share/exo`): its models live there.
 */
export function exoDataDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  return exoXdgDir(env, platform, 'XDG_DATA_HOME', '.local/share');
}

/** Where exo downloads models: `EXO_DEFAULT_MODELS_DIR` (a leading `~` is the home folder), else `models/` in its data folder. */
export function exoModelsDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  const set = env.EXO_DEFAULT_MODELS_DIR;
  if (set) return resolve(set === '~' || set.startsWith('~/') ? join(env.HOME || homedir(), set.slice(1)) : set);
  return join(exoDataDir(env, platform), 'models');
}

/** exo's `_get_xdg_dir`: EXO_HOME (relative to HOME) first, `~/.exo` off Linux, else the XDG folder. */
function exoXdgDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, xdgVariable: 'XDG_CACHE_HOME' | 'XDG_DATA_HOME', fallback: string): string {
  const home = env.HOME || homedir();
  if (env.EXO_HOME) return resolve(home, env.EXO_HOME);
  if (platform !== 'linux') return join(home, '.exo');
  // An empty XDG variable counts as unset (the XDG spec says so; exo would make a relative folder of it).
  const xdg = env[xdgVariable];
  return join(xdg ? resolve(xdg) : join(home, fallback), 'exo');
}

/** exo's log folder: exo.log and runner_log/{stdout,stderr}.log. */
export function exoLogDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  return join(exoHomeDir(env, platform), 'exo_log');
}

/** exo's pidfile, held with flock while exo lives. */
export function exoPidfilePath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  return join(exoHomeDir(env, platform), 'exo.pid');
}

/** exo's own log, the one with "FAST_SYNCH forced ON|OFF" and the runners' "Fast synch flag: N". */
export function exoLogPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  return join(exoLogDir(env, platform), 'exo.log');
}

/** Zombie-aware liveness: a zombie has exited and holds nothing but its exit status. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // No procfs (macOS): signal 0 succeeded.
  }
}

/** The pid holding the pidfile, or null when it is free (no file, no pid, or a dead one). `self` never counts. */
export function pidfileHolder(path: string, self: number = process.pid): number | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 && pid !== self && pidAlive(pid) ? pid : null;
}
