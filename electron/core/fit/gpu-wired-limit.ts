/**
 * The GPU's wired limit on a Mac: how much memory Metal lets the GPU keep wired, which
 * MLX's weights and KV caches must stay under (exobar shares it between runners,
 * electron/core/mlx/wired-limit-share.ts).
 *
 * An operator can set it with `sudo sysctl iogpu.wired_limit_mb=N`; 0 (the default)
 * means macOS's own choice, Metal's recommendedMaxWorkingSetSize: about two thirds of
 * the memory on Macs up to 36 GB and three quarters above (what mlx-lm's users measure
 * with mx.metal.device_info()). Not a Mac: null, there is no such limit to check.
 */
import { execFile } from 'node:child_process';

const GiB = 1024 ** 3;

/** macOS's default limit for a Mac with `totalBytes` of memory. */
export function defaultWiredLimit(totalBytes: number): number {
  return Math.floor(totalBytes > 36 * GiB ? totalBytes * 0.75 : (totalBytes * 2) / 3);
}

/** The limit from `sysctl -n iogpu.wired_limit_mb`'s output; the default when 0 or unreadable. */
export function wiredLimitFromSysctl(output: string | null, totalBytes: number): number {
  const mb = output === null ? NaN : Number(output.trim());
  return Number.isFinite(mb) && mb > 0 ? Math.min(mb * 1024 * 1024, totalBytes) : defaultWiredLimit(totalBytes);
}

/** Replaced in tests. */
export interface GpuLimitDeps {
  platform: NodeJS.Platform;
  runSysctl: () => Promise<string>;
}

const defaultDeps: GpuLimitDeps = {
  platform: process.platform,
  runSysctl: () =>
    new Promise((resolve, reject) => {
      execFile('/usr/sbin/sysctl', ['-n', 'iogpu.wired_limit_mb'], { timeout: 2000, encoding: 'utf8' }, (err, out) => (err ? reject(err) : resolve(out)));
    }),
};

/** The wired limit in bytes on a Mac (never throws), null elsewhere. */
export async function readGpuWiredLimit(totalBytes: number, deps: Partial<GpuLimitDeps> = {}): Promise<number | null> {
  const d = { ...defaultDeps, ...deps };
  if (d.platform !== 'darwin') return null;
  let output: string | null = null;
  try {
    output = await d.runSysctl();
  } catch {
    output = null; // older macOS has no iogpu sysctl: its default applies
  }
  return wiredLimitFromSysctl(output, totalBytes);
}
