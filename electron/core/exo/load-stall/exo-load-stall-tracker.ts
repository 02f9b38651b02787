/**
 * Loads that never end. exo removed its model-load timeout (exo PR #1889), so a runner
 * can sit in RunnerConnecting, RunnerLoading with no new layer, or RunnerWarmingUp for
 * ever (exo issues #1731, #1735, #1591), and requests for its model wait with it.
 *
 * What this tracker measures, per runner of a loading instance: since when its status
 * and layers loaded last moved. And per Mac, how fast it loads: bytes of layers loaded
 * over the time they took, read from the runners' RunnerLoading progress and the
 * model's size (exo's download of it on that Mac), kept as a moving average.
 *
 * A runner is stalled when nothing moved for longer than its threshold: the time one
 * step should take on that Mac (a layer while loading; the whole shard while
 * connecting or warming up) times `stallFactor`, and never less than `floorMs`, the
 * setting `exo.loadStallSeconds`. A Mac not measured yet is taken at `assumedBytesPerS`.
 */
import type { ExoDownload } from '../downloads/parse-exo-downloads';
import type { ExoInstance, ExoRunnerStatus } from '../attach/parse-exo-state';
import { LOADING_STATUSES } from '../attach/exo-view';

export interface LoadStallOptions {
  /** The least time without progress that counts as a stall (the setting exo.loadStallSeconds). */
  floorMs: number;
  /** How many times the expected step time may pass without progress. */
  stallFactor: number;
  /** A Mac's load speed before one is measured (bytes/s). */
  assumedBytesPerS: number;
}

export const DEFAULT_LOAD_STALL_OPTIONS: LoadStallOptions = { floorMs: 120_000, stallFactor: 5, assumedBytesPerS: 100e6 };

/** One runner that stopped moving while loading. */
export interface LoadStall {
  runnerId: string;
  nodeId: string | null;
  phase: string;
  layersLoaded: number | null;
  totalLayers: number | null;
  /** Since when nothing moved (epoch ms). */
  stillSince: number;
  /** The threshold it passed (ms), and what it was made of. */
  thresholdMs: number;
  measuredBytesPerS: number | null;
}

interface Progress {
  key: string;
  since: number;
  layers: number | null;
}

/** Weight of the newest measurement in a Mac's moving average of load speed. */
const SPEED_WEIGHT = 0.3;

export class ExoLoadStallTracker {
  private readonly progress = new Map<string, Progress>();
  private readonly speedByNode = new Map<string, number>();
  private now = 0;
  private instances = new Map<string, ExoInstance>();
  private runners = new Map<string, ExoRunnerStatus>();
  private sizes = new Map<string, number>();

  constructor(private readonly options: () => LoadStallOptions = () => DEFAULT_LOAD_STALL_OPTIONS) {}

  /** Takes in one reading: instances and runners of the same poll, and the downloads last read (model sizes per Mac). */
  observe(now: number, instances: Map<string, ExoInstance>, runners: Map<string, ExoRunnerStatus>, downloads: readonly ExoDownload[] | null): void {
    this.now = now;
    this.instances = instances;
    this.runners = runners;
    if (downloads) for (const d of downloads) if (d.totalBytes !== null) this.sizes.set(`${d.nodeId}/${d.modelId}`, d.totalBytes);
    const live = new Set<string>();
    for (const instance of instances.values()) {
      const modelLayers = Math.max(0, ...instance.shards.map((s) => s.endLayer ?? 0));
      for (const shard of instance.shards) {
        const status = runners.get(shard.runnerId);
        if (!status) continue;
        live.add(shard.runnerId);
        const key = `${status.tag}:${status.layersLoaded ?? ''}`;
        const before = this.progress.get(shard.runnerId);
        if (before?.key === key) continue;
        this.measure(before, status, shard.nodeId, instance.modelId, modelLayers, now);
        this.progress.set(shard.runnerId, { key, since: now, layers: status.layersLoaded });
      }
    }
    for (const id of this.progress.keys()) if (!live.has(id)) this.progress.delete(id);
  }

  /** The instance's runners that stopped moving while loading, longest still first. */
  stallsOf(exoInstanceId: string): LoadStall[] {
    const instance = this.instances.get(exoInstanceId);
    if (!instance) return [];
    const options = this.options();
    const modelLayers = Math.max(0, ...instance.shards.map((s) => s.endLayer ?? 0));
    const stalls: LoadStall[] = [];
    for (const shard of instance.shards) {
      const status = this.runners.get(shard.runnerId);
      const progress = this.progress.get(shard.runnerId);
      if (!status || !progress || !LOADING_STATUSES.has(status.tag)) continue;
      const measured = shard.nodeId ? (this.speedByNode.get(shard.nodeId) ?? null) : null;
      const speed = measured ?? options.assumedBytesPerS;
      const size = shard.nodeId ? (this.sizes.get(`${shard.nodeId}/${instance.modelId}`) ?? null) : null;
      const shardLayers = shard.startLayer !== null && shard.endLayer !== null ? shard.endLayer - shard.startLayer : null;
      // Loading moves a layer at a time; the other phases (connecting, warming up) take about the whole shard.
      const stepBytes =
        size === null || modelLayers === 0 ? 0 : status.tag === 'RunnerLoading' ? size / modelLayers : (size * (shardLayers ?? modelLayers)) / modelLayers;
      const thresholdMs = Math.max(options.floorMs, options.stallFactor * (stepBytes / speed) * 1000);
      if (this.now - progress.since <= thresholdMs) continue;
      stalls.push({
        runnerId: shard.runnerId,
        nodeId: shard.nodeId,
        phase: status.tag,
        layersLoaded: status.layersLoaded,
        totalLayers: status.totalLayers,
        stillSince: progress.since,
        thresholdMs,
        measuredBytesPerS: measured,
      });
    }
    return stalls.sort((a, b) => a.stillSince - b.stillSince);
  }

  /** A Mac's measured load speed from a runner's new layers, when the model's size there is known. */
  private measure(before: Progress | undefined, status: ExoRunnerStatus, nodeId: string | null, model: string, modelLayers: number, now: number): void {
    if (!before || !nodeId || status.tag !== 'RunnerLoading' || before.layers === null || status.layersLoaded === null) return;
    const layers = status.layersLoaded - before.layers;
    const size = this.sizes.get(`${nodeId}/${model}`);
    const seconds = (now - before.since) / 1000;
    if (layers <= 0 || !size || modelLayers === 0 || seconds <= 0) return;
    const speed = (layers * size) / modelLayers / seconds;
    const earlier = this.speedByNode.get(nodeId);
    this.speedByNode.set(nodeId, earlier === undefined ? speed : earlier + SPEED_WEIGHT * (speed - earlier));
  }
}
