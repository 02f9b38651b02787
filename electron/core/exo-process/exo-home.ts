/**
 * exo's files on this Mac: `~/.exo` (`$HOME/$EXO_HOME`, EXO_HOME relative to $HOME),
 * its pidfile and its log. exo holds `exo.pid` with flock for as long as it lives, so
 * the lock is free once the pid written in it is no longer a live process (the kernel
 * drops a flock when its holder dies, even by SIGKILL).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** `~/.exo` as exo computes it: `Path.home() / EXO_HOME` (an absolute EXO_HOME wins). */
export function exoHomeDir(env: NodeJS.ProcessEnv): string {
  return resolve(env.HOME || homedir(), env.EXO_HOME || '.exo');
}

export function exoPidfilePath(env: NodeJS.ProcessEnv): string {
  return join(exoHomeDir(env), 'exo.pid');
}

/** exo's own log, the one with "FAST_SYNCH forced ON|OFF" and the runners' "Fast synch flag: N". */
export function exoLogPath(env: NodeJS.ProcessEnv): string {
  return join(exoHomeDir(env), 'exo_log', 'exo.log');
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
