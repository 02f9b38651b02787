/**
 * Memory and CPU of another process, for the runtime benchmarks: from /proc on Linux,
 * from `ps` elsewhere (macOS). Every function answers null once the process is gone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const HAS_PROC = existsSync('/proc/self/status');

let clockTicks: number | null = null;
/** Clock ticks per second for /proc/<pid>/stat (almost always 100). */
function ticksPerSecond(): number {
  if (clockTicks == null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

function ps(pid: number, column: 'rss' | 'time'): string | null {
  try {
    const out = execFileSync('ps', ['-o', `${column}=`, '-p', String(pid)], { encoding: 'utf8' }).trim();
    return out === '' ? null : out;
  } catch {
    return null;
  }
}

/** `ps -o time=`: `[[dd-]hh:]mm:ss[.cc]` in seconds. */
export function parsePsTime(text: string): number {
  const [days, clock] = text.includes('-') ? [Number(text.split('-')[0]), text.split('-')[1]!] : [0, text];
  return days * 86_400 + clock.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/** Resident set size now, in bytes. */
export function rssBytes(pid: number): number | null {
  if (HAS_PROC) return procStatus(pid, 'VmRSS');
  const kb = ps(pid, 'rss');
  return kb == null ? null : Number(kb) * 1024;
}

/** The kernel's record of the peak resident set size (Linux VmHWM), or null where there is none. */
export function peakRssBytes(pid: number): number | null {
  return HAS_PROC ? procStatus(pid, 'VmHWM') : null;
}

/** CPU time (user + system) used so far, in milliseconds. */
export function cpuTimeMs(pid: number): number | null {
  if (HAS_PROC) {
    try {
      // Fields after the command name, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
      return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond()) * 1000;
    } catch {
      return null;
    }
  }
  const time = ps(pid, 'time');
  return time == null ? null : parsePsTime(time) * 1000;
}

/**
 * Samples a process's RSS until stopped; `stop()` gives the largest seen, raised to the
 * kernel's peak where it keeps one (sampling alone can miss a short peak).
 */
export function sampleRss(pid: number, intervalMs = 50): { stop(): number | null } {
  let max: number | null = null;
  const take = () => {
    const rss = rssBytes(pid);
    if (rss != null) max = Math.max(max ?? 0, rss);
    const peak = peakRssBytes(pid);
    if (peak != null) max = Math.max(max ?? 0, peak);
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      take();
      clearInterval(timer);
      return max;
    },
  };
}

export const MB = 1024 * 1024;
