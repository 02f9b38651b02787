/**
 * One model's decode, rolling over the last minutes, split by what its GPU neighbours
 * were doing: each inter-token gap of each of its requests (DecodeTiming's onGap) is
 * filed as solo (no neighbour on the GPU prefilling or decoding during the gap) or
 * under every neighbour that was, with that neighbour's phase (InstancePhases). The
 * snapshot's `sharing` object is built from it.
 *
 * A gap is one stream's step time, so the solo figures include the model's own batch:
 * they compare like with like only when its own load is similar in both conditions.
 */
import {
  MIN_GAPS_FOR_WORDS,
  sharingWords,
  type InstanceSharing,
  type NeighbourPhase,
  type SharingFigures,
  type SharingNeighbour,
} from '../../../shared/sharing';
import { percentile } from '../../../shared/stats';
import type { TokenGap } from './decode-timing';

/** The default window: the last five minutes. */
export const SHARING_WINDOW_MS = 5 * 60_000;
/** Gaps kept per condition (oldest dropped first), so memory stays bounded under load. */
const MAX_GAPS_PER_CONDITION = 5000;

/** A neighbour that was busy during a gap. */
export interface BusyNeighbour {
  instanceId: string;
  model: string;
  modelName: string;
  phase: NeighbourPhase;
  /** The exo Mac shared; null for this Mac's runners. */
  node: string | null;
}

class GapSeries {
  private readonly at: number[] = [];
  private readonly gaps: number[] = [];
  private cached: SharingFigures | null = null;

  add(gap: TokenGap): void {
    this.at.push(gap.at);
    this.gaps.push(gap.gapMs);
    if (this.gaps.length > MAX_GAPS_PER_CONDITION) {
      this.at.shift();
      this.gaps.shift();
    }
    this.cached = null;
  }

  prune(before: number): void {
    let drop = 0;
    while (drop < this.at.length && this.at[drop]! < before) drop++;
    if (drop === 0) return;
    this.at.splice(0, drop);
    this.gaps.splice(0, drop);
    this.cached = null;
  }

  get size(): number {
    return this.gaps.length;
  }

  figures(): SharingFigures {
    if (this.cached) return this.cached;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    const mean = sorted.reduce((s, g) => s + g, 0) / (sorted.length || 1);
    this.cached = {
      gaps: sorted.length,
      decodeTokensPerSecond: sorted.length > 0 && mean > 0 ? 1000 / mean : null,
      itlP50Ms: percentile(sorted, 0.5),
      itlP95Ms: percentile(sorted, 0.95),
    };
    return this.cached;
  }
}

const ratio = (a: number | null, b: number | null): number | null => (a !== null && b !== null && b > 0 ? a / b : null);

export class SharingStats {
  private readonly solo = new GapSeries();
  private readonly shared = new Map<string, { neighbour: BusyNeighbour; series: GapSeries }>();

  constructor(
    private readonly observed: InstanceSharing['observed'],
    private readonly windowMs = SHARING_WINDOW_MS,
  ) {}

  /** Files one gap: solo when `busy` is empty, else under each busy neighbour and its phase. */
  add(gap: TokenGap, busy: readonly BusyNeighbour[]): void {
    if (busy.length === 0) {
      this.solo.add(gap);
      return;
    }
    for (const neighbour of busy) {
      const key = `${neighbour.instanceId}\u0000${neighbour.phase}\u0000${neighbour.node ?? ''}`;
      let entry = this.shared.get(key);
      if (!entry) this.shared.set(key, (entry = { neighbour, series: new GapSeries() }));
      entry.series.add(gap);
    }
  }

  /** The solo figures alone as of `now` (what the pacing policy compares a live ITL with; cached between solo gaps). */
  soloFigures(now: number): SharingFigures {
    this.solo.prune(now - this.windowMs);
    return this.solo.figures();
  }

  /** The snapshot's `sharing` object as of `now` (the clock of the gaps). */
  snapshot(now: number): InstanceSharing {
    const before = now - this.windowMs;
    this.solo.prune(before);
    const solo = this.solo.figures();
    const neighbours: SharingNeighbour[] = [];
    for (const [key, { neighbour, series }] of this.shared) {
      series.prune(before);
      if (series.size === 0) {
        this.shared.delete(key);
        continue;
      }
      const f = series.figures();
      neighbours.push({
        ...f,
        ...neighbour,
        decodeRatio: ratio(f.decodeTokensPerSecond, solo.decodeTokensPerSecond),
        itlP95Ratio: ratio(f.itlP95Ms, solo.itlP95Ms),
      });
    }
    neighbours.sort((a, b) => (a.decodeRatio ?? 1) - (b.decodeRatio ?? 1));
    const worded = solo.gaps >= MIN_GAPS_FOR_WORDS ? neighbours.find((n) => n.gaps >= MIN_GAPS_FOR_WORDS && n.decodeRatio !== null) : undefined;
    return { windowMs: this.windowMs, solo, neighbours, summary: worded ? sharingWords(worded) : null, observed: this.observed };
  }
}
