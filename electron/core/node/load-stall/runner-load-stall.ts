/**
 * Loads of this Mac's own runners that stop moving (runner_load_stalled), the local
 * twin of exo's (electron/core/exo/load-stall/). mlx-lm has no load timeout either: a
 * runner reading weights from a slow or failing disk, or on a Mac short of memory, can
 * sit in one layer for minutes while requests for its model wait.
 *
 * What this tracker measures, per instance: since when its runner's progress (its state,
 * the status it reported, the layers loaded) last moved. And for this Mac, how fast it
 * loads: bytes of layers loaded over the time they took, from every runner's
 * RunnerLoading progress and its model's size (the catalog's `memoryBytes`), kept as a
 * moving average across runners, so a second model's threshold comes from the first's.
 *
 * A runner is stalled when nothing moved for longer than its threshold: the time one step
 * should take on this Mac (a layer while loading with layers reported; the whole model
 * while starting, warming up or loading without layers) times `stallFactor`, and never
 * less than `floorMs` (the setting `runner.loadStallSeconds`). Before a measurement the
 * Mac is taken at `assumedBytesPerS`. The rule is exo's tracker's; the inputs differ
 * (one runner per instance, this Mac only, the catalog's size).
 */
import type { RunnerState } from '../../../../shared/snapshot';
import type { RunnerStatus } from '../../../../shared/runner-protocol';

export interface RunnerLoadStallOptions {
  /** The least time without progress that counts as a stall. */
  floorMs: number;
  /** How many times the expected step time may pass without progress. */
  stallFactor: number;
  /** This Mac's load speed before one is measured (bytes/s). */
  assumedBytesPerS: number;
}

export const DEFAULT_RUNNER_LOAD_STALL: Omit<RunnerLoadStallOptions, 'floorMs'> = { stallFactor: 5, assumedBytesPerS: 100e6 };

/** The runner states on the way to ready: a load that can stall. */
export const LOAD_STATES: ReadonlySet<RunnerState> = new Set<RunnerState>(['starting', 'loading', 'warming_up']);

/** One instance's runner as the tracker reads it. */
export interface RunnerLoadReading {
  instanceId: string;
  state: RunnerState;
  status: RunnerStatus;
  /** The model's size on disk and in memory (bytes). */
  sizeBytes: number;
  /** The least time without progress for this runner (the setting, scaled for a sim runner). */
  floorMs: number;
}

/** One runner that stopped moving while loading. */
export interface RunnerLoadStall {
  instanceId: string;
  /** The runner state it sits in, and the status it last reported. */
  state: RunnerState;
  status: RunnerStatus['kind'];
  layersLoaded: number | null;
  totalLayers: number | null;
  /** Since when nothing moved (performance.now() ms). */
  stillSince: number;
  thresholdMs: number;
  /** This Mac's measured load speed (bytes/s), null before a measurement. */
  measuredBytesPerS: number | null;
}

interface Progress {
  key: string;
  since: number;
  layers: number | null;
}

/** Weight of the newest measurement in this Mac's moving average of load speed (exo's tracker's). */
const SPEED_WEIGHT = 0.3;

const layersOf = (status: RunnerStatus): { layers: number | null; total: number | null } =>
  status.kind === 'RunnerLoading' ? { layers: status.layersLoaded, total: status.totalLayers } : { layers: null, total: null };

export class RunnerLoadStallTracker {
  private readonly progress = new Map<string, Progress>();
  private speed: number | null = null;

  constructor(private readonly options: Omit<RunnerLoadStallOptions, 'floorMs'> = DEFAULT_RUNNER_LOAD_STALL) {}

  /** Takes in every instance's runner now; returns the ones stalled, longest still first. */
  observe(now: number, readings: readonly RunnerLoadReading[]): RunnerLoadStall[] {
    const live = new Set<string>();
    const stalls: RunnerLoadStall[] = [];
    for (const r of readings) {
      if (!LOAD_STATES.has(r.state)) continue;
      live.add(r.instanceId);
      const { layers, total } = layersOf(r.status);
      const key = `${r.state}:${r.status.kind}:${layers ?? ''}`;
      const before = this.progress.get(r.instanceId);
      if (before?.key !== key) {
        this.measure(before, layers, total, r.sizeBytes, now);
        this.progress.set(r.instanceId, { key, since: now, layers });
        continue;
      }
      const speed = this.speed ?? this.options.assumedBytesPerS;
      // Loading with layers moves a layer at a time; the other phases take about the whole model.
      const stepBytes = layers !== null && total ? r.sizeBytes / total : r.sizeBytes;
      const thresholdMs = Math.max(r.floorMs, this.options.stallFactor * (stepBytes / speed) * 1000);
      if (now - before.since <= thresholdMs) continue;
      stalls.push({
        instanceId: r.instanceId,
        state: r.state,
        status: r.status.kind,
        layersLoaded: layers,
        totalLayers: total,
        stillSince: before.since,
        thresholdMs,
        measuredBytesPerS: this.speed,
      });
    }
    for (const id of this.progress.keys()) if (!live.has(id)) this.progress.delete(id);
    return stalls.sort((a, b) => a.stillSince - b.stillSince);
  }

  /** This Mac's load speed from a runner's new layers. */
  private measure(before: Progress | undefined, layers: number | null, total: number | null, sizeBytes: number, now: number): void {
    if (!before || before.layers === null || layers === null || !total) return;
    const seconds = (now - before.since) / 1000;
    const moved = layers - before.layers;
    if (moved <= 0 || seconds <= 0 || sizeBytes <= 0) return;
    const speed = (moved * sizeBytes) / total / seconds;
    this.speed = this.speed === null ? speed : this.speed + SPEED_WEIGHT * (speed - this.speed);
  }
}
