/**
 * Whether a process is still running, for tests that check nothing is left behind.
 * A zombie counts as gone: it has exited, and in a container the reaper may be slow
 * to collect orphans.
 */
import { readFileSync } from 'node:fs';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // No procfs (macOS): signal 0 succeeded.
  }
}
