/**
 * One instance's residency as the node keeps it: pinned or not, its time to live, and
 * when it was last used. Pure bookkeeping over the clock; the node's idle reaper
 * (idle-reaper.ts) and the loader's eviction (evict-plan.ts) decide from what it says.
 */
import type { Residency } from '../../../shared/residency';

export interface ResidencyInit {
  pinned: boolean;
  /** Seconds idle before unloading; null: never; undefined: the node's default (the setting). */
  ttlSeconds?: number | null;
  loadedOnDemand: boolean;
  memoryBytes: number;
}

export class ResidencyState {
  pinned: boolean;
  /** The instance's own time to live; undefined follows the default (the setting, read when asked). */
  ttlOverride: number | null | undefined;
  readonly loadedOnDemand: boolean;
  readonly memoryBytes: number;
  /** Monotonic ms of the last arrival or end of a request, or of the instance's start. */
  lastUsedAt = performance.now();

  constructor(
    init: ResidencyInit,
    private readonly defaultTtlSeconds: () => number | null,
  ) {
    this.pinned = init.pinned;
    this.ttlOverride = init.ttlSeconds;
    this.loadedOnDemand = init.loadedOnDemand;
    this.memoryBytes = init.memoryBytes;
  }

  /** Seconds idle before unloading now; null: never. */
  get ttlSeconds(): number | null {
    return this.ttlOverride === undefined ? this.defaultTtlSeconds() : this.ttlOverride;
  }

  /** A request arrived or ended: the idle clock starts over. */
  touch(now = performance.now()): void {
    this.lastUsedAt = now;
  }

  /**
   * Monotonic ms at which the instance unloads if nothing comes, or null when it will
   * not: pinned, no time to live, work queued or in flight, or not serving yet (the
   * clock runs from the last use, and a model still loading has not been usable).
   */
  unloadsAt(load: number, serving: boolean): number | null {
    const ttl = this.ttlSeconds;
    if (this.pinned || ttl === null || load > 0 || !serving) return null;
    return this.lastUsedAt + ttl * 1000;
  }

  /** The snapshot's view, its moments turned into epoch ms. */
  snapshot(now: number, load: number, serving: boolean): Residency {
    const toEpoch = (t: number) => Date.now() - (now - t);
    const unloadsAt = this.unloadsAt(load, serving);
    return {
      pinned: this.pinned,
      ttlSeconds: this.ttlSeconds,
      loadedOnDemand: this.loadedOnDemand,
      lastUsedAt: toEpoch(this.lastUsedAt),
      idleSince: load > 0 ? null : toEpoch(this.lastUsedAt),
      unloadsAt: unloadsAt === null ? null : toEpoch(unloadsAt),
      memoryBytes: this.memoryBytes,
    };
  }
}
