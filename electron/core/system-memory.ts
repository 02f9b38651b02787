/**
 * Total and free memory from the OS, for the safe pair's memory check.
 *
 * Why not just os.freemem(): on macOS it counts only truly free pages, and macOS keeps
 * most idle memory as inactive (file cache it drops on demand), so os.freemem() reads
 * a few hundred MB on a Mac with tens of GB to spare. `vm_stat`'s free + inactive +
 * speculative pages is what the system can hand to a new process without swapping.
 * On Linux, the kernel's own estimate of the same thing is MemAvailable.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import os from 'node:os';

export interface SystemMemory {
  totalBytes: number;
  freeBytes: number;
  /** Where `freeBytes` came from, for diagnostics. */
  source: 'vm_stat' | 'meminfo' | 'os.freemem';
}

/**
 * Parses `vm_stat` output: (free + inactive + speculative) pages x the page size
 * from its header ("page size of 16384 bytes"). Null when the text lacks the header
 * or the free-pages line.
 */
export function parseVmStat(text: string): { pageSize: number; freeBytes: number } | null {
  const header = /page size of (\d+) bytes/.exec(text);
  if (!header) return null;
  const pageSize = Number(header[1]);
  const pages = (label: string): number | null => {
    const m = new RegExp(`^Pages ${label}:\\s+(\\d+)\\.?\\s*$`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const free = pages('free');
  if (free === null || !(pageSize > 0)) return null;
  const freePages = free + (pages('inactive') ?? 0) + (pages('speculative') ?? 0);
  return { pageSize, freeBytes: freePages * pageSize };
}

/**
 * Parses /proc/meminfo: MemTotal and MemAvailable (kB) as bytes. Null when
 * MemAvailable is missing (kernels before 3.14).
 */
export function parseMeminfo(text: string): { totalBytes: number | null; availableBytes: number } | null {
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s*kB\\s*$`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : null;
  };
  const availableBytes = kb('MemAvailable');
  if (availableBytes === null) return null;
  return { totalBytes: kb('MemTotal'), availableBytes };
}

/** What {@link readSystemMemory} reads from; replaced in tests. */
export interface SystemMemoryDeps {
  platform: NodeJS.Platform;
  totalmem: () => number;
  freemem: () => number;
  runVmStat: () => Promise<string>;
  readMeminfo: () => Promise<string>;
}

const defaultDeps: SystemMemoryDeps = {
  platform: process.platform,
  totalmem: () => os.totalmem(),
  freemem: () => os.freemem(),
  runVmStat: () =>
    new Promise((resolve, reject) => {
      execFile('/usr/bin/vm_stat', { timeout: 2000, encoding: 'utf8' }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    }),
  readMeminfo: () => readFile('/proc/meminfo', 'utf8'),
};

/**
 * Reads total and free memory. macOS: `vm_stat`; Linux: /proc/meminfo's MemAvailable;
 * anything else, or when those fail to read or parse: os.freemem(). Never throws.
 */
export async function readSystemMemory(deps: Partial<SystemMemoryDeps> = {}): Promise<SystemMemory> {
  const d = { ...defaultDeps, ...deps };
  const totalBytes = d.totalmem();
  // Free memory can never exceed the total; a parse of odd output must not claim more.
  const clamp = (n: number): number => Math.max(0, Math.min(n, totalBytes));
  try {
    if (d.platform === 'darwin') {
      const parsed = parseVmStat(await d.runVmStat());
      if (parsed) return { totalBytes, freeBytes: clamp(parsed.freeBytes), source: 'vm_stat' };
    } else if (d.platform === 'linux') {
      const parsed = parseMeminfo(await d.readMeminfo());
      if (parsed) return { totalBytes, freeBytes: clamp(parsed.availableBytes), source: 'meminfo' };
    }
  } catch {
    // Fall through: os.freemem() is a worse estimate, but an estimate.
  }
  return { totalBytes, freeBytes: clamp(d.freemem()), source: 'os.freemem' };
}
