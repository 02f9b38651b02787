/**
 * system.json: the machine as far as a stall or a failure needs it (CPU, memory, OS,
 * on macOS the hardware model and OS build). Deliberately asks for nothing that
 * identifies the machine: no serial number, hardware UUID, MAC address or host name
 * (ioreg and system_profiler, which print those, are never run).
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { readSystemMemory } from '../system-memory';

export interface SystemInfo {
  platform: NodeJS.Platform;
  arch: string;
  osRelease: string;
  kernelVersion: string | null;
  cpu: { model: string | null; count: number };
  memory: { totalBytes: number; freeBytes: number; freeSource: string };
  loadAverage: number[];
  systemUptimeS: number;
  /** macOS only, else null. */
  macos: {
    /** sysctl hw.model, e.g. "Mac15,14". */
    hardwareModel: string | null;
    /** sysctl machdep.cpu.brand_string, e.g. "Apple M3 Ultra". */
    chip: string | null;
    /** sw_vers: product version and build, e.g. "15.3" and "24D60". */
    productVersion: string | null;
    buildVersion: string | null;
  } | null;
}

function run(command: string, args: string[], timeoutMs = 1500): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout) => resolve(error ? null : stdout.trim() || null));
  });
}

/** Reads system.json's contents; never throws (a missing tool gives null fields). */
export async function readSystemInfo(): Promise<SystemInfo> {
  const cpus = os.cpus();
  const [memory, macos] = await Promise.all([
    readSystemMemory(),
    process.platform === 'darwin'
      ? Promise.all([
          run('/usr/sbin/sysctl', ['-n', 'hw.model']),
          run('/usr/sbin/sysctl', ['-n', 'machdep.cpu.brand_string']),
          run('/usr/bin/sw_vers', ['-productVersion']),
          run('/usr/bin/sw_vers', ['-buildVersion']),
        ]).then(([hardwareModel, chip, productVersion, buildVersion]) => ({ hardwareModel, chip, productVersion, buildVersion }))
      : Promise.resolve(null),
  ]);
  let kernelVersion: string | null = null;
  try {
    kernelVersion = os.version();
  } catch {
    kernelVersion = null;
  }
  return {
    platform: process.platform,
    arch: process.arch,
    osRelease: os.release(),
    kernelVersion,
    cpu: { model: cpus[0]?.model ?? null, count: cpus.length },
    memory: { totalBytes: memory.totalBytes, freeBytes: memory.freeBytes, freeSource: memory.source },
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
    systemUptimeS: Math.round(os.uptime()),
    macos,
  };
}
