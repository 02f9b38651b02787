/**
 * One simulated GPU shared by the sim runners of one node (same EXOBAR_SIM_GPU_DIR).
 *
 * Why: on a Mac every runner of the node computes on the same GPU, so GPU work of one
 * model runs slower while another model computes (exo's measurement: a short 1B request
 * took 0.38-0.40 s instead of 0.23 s while the 3B prefilled). The sim reproduces that
 * across processes with marker files: a runner that computes keeps a file named
 * `busy.<pid>.<nonce>.<untilEpochMs>` in the directory; GPU work is done in small slices
 * and each slice is stretched by the number of runners busy at that moment (time
 * slicing). The state is in the file name, so one readdir per slice is all the I/O.
 * CPU-side work (templating, tokenizing) never goes through here.
 *
 * An idle runner (loaded, no request) keeps no marker, so it slows nobody: the oMLX
 * report of idle resident models halving decode is not a measured or documented cause
 * for separate runner processes, so the sim does not model one (docs/sharing-policy.md,
 * "Experiment 4"); the sharing check measures it on a real machine.
 */
import { mkdirSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Pacer } from './pacer';

/** Real milliseconds of GPU work between two looks at the other runners. */
export const GPU_SLICE_MS = 10;
/** A marker stays valid this long past the slice being computed (covers gaps between steps). */
const MARKER_MARGIN_MS = 40;
/** Refresh the marker when less than this is left beyond the current slice. */
const MARKER_REFRESH_MS = 15;
/** Markers expired this long ago whose process is gone are removed (the runner was killed). */
const STALE_MARKER_MS = 30_000;

interface Marker {
  name: string;
  pid: number;
  owner: string;
  untilMs: number;
}

function parseMarker(name: string): Marker | null {
  const match = /^busy\.(\d+)\.([0-9a-f]+)\.(\d+)$/.exec(name);
  if (!match) return null;
  return { name, pid: Number(match[1]), owner: `${match[1]}.${match[2]}`, untilMs: Number(match[3]) };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class SharedGpu {
  /** pid plus a nonce: unique even for two instances in one process (unit tests). */
  private readonly owner = `${process.pid}.${randomBytes(4).toString('hex')}`;
  private markerName: string | null = null;
  private markerUntilMs = 0;

  constructor(
    private readonly dir: string,
    private readonly pacer: Pacer,
  ) {
    mkdirSync(dir, { recursive: true });
    this.removeStaleMarkers();
  }

  /** Runners other than this one whose marker says they are computing now. */
  busyOthers(nowMs = Date.now()): number {
    let count = 0;
    for (const name of this.list()) {
      const marker = parseMarker(name);
      if (marker && marker.owner !== this.owner && marker.untilMs > nowMs) count++;
    }
    return count;
  }

  /**
   * Does `ms` (real, already time-scaled) of GPU work, slice by slice, each slice
   * stretched by 1 + the number of other busy runners.
   */
  async compute(ms: number): Promise<void> {
    let remaining = ms;
    while (remaining > 0) {
      const slice = Math.min(remaining, GPU_SLICE_MS);
      remaining -= slice;
      const stretched = slice * (1 + this.busyOthers());
      this.markBusy(stretched);
      await this.pacer.wait(stretched);
    }
  }

  /** Nothing to compute: remove the marker so other runners run at full speed. */
  idle(): void {
    if (this.markerName === null) return;
    this.unlink(this.markerName);
    this.markerName = null;
    this.markerUntilMs = 0;
  }

  private markBusy(sliceMs: number): void {
    const now = Date.now();
    if (this.markerUntilMs >= now + sliceMs + MARKER_REFRESH_MS) return;
    const untilMs = Math.ceil(now + sliceMs + MARKER_MARGIN_MS);
    const name = `busy.${this.owner}.${untilMs}`;
    try {
      if (this.markerName === null) writeFileSync(join(this.dir, name), '');
      else renameSync(join(this.dir, this.markerName), join(this.dir, name));
    } catch {
      // The old marker vanished (someone cleaned the directory): start a new one.
      try {
        writeFileSync(join(this.dir, name), '');
      } catch {
        return; // The directory is gone: the runner still works, only unshared.
      }
    }
    this.markerName = name;
    this.markerUntilMs = untilMs;
  }

  private removeStaleMarkers(): void {
    const now = Date.now();
    for (const name of this.list()) {
      const marker = parseMarker(name);
      if (marker && marker.untilMs < now - STALE_MARKER_MS && !processAlive(marker.pid)) this.unlink(name);
    }
  }

  private list(): string[] {
    try {
      return readdirSync(this.dir);
    } catch {
      return [];
    }
  }

  private unlink(name: string): void {
    try {
      unlinkSync(join(this.dir, name));
    } catch {
      // Already gone.
    }
  }
}
