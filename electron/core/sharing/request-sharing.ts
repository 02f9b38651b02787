/**
 * One request's decode beside its neighbours: how many of its inter-token gaps (and
 * how much time) fell while no neighbour worked, and while each neighbour prefilled or
 * decoded. The node's request record carries it, so the diagnosis can name the
 * neighbour and the phase that slowed a request's decode.
 */
import type { NeighbourPhase } from '../../../shared/sharing';
import type { TokenGap } from './decode-timing';
import type { BusyNeighbour } from './sharing-stats';

/** The request record's `decodeSharing`. */
export interface RequestDecodeSharing {
  soloGaps: number;
  soloMs: number;
  neighbours: Array<{ instanceId: string; model: string; modelName: string; phase: NeighbourPhase; node: string | null; gaps: number; ms: number }>;
}

export class RequestSharing {
  private soloGaps = 0;
  private soloMs = 0;
  private readonly beside = new Map<string, RequestDecodeSharing['neighbours'][number]>();

  add(gap: TokenGap, busy: readonly BusyNeighbour[]): void {
    if (busy.length === 0) {
      this.soloGaps += 1;
      this.soloMs += gap.gapMs;
      return;
    }
    for (const n of busy) {
      const key = `${n.instanceId}\u0000${n.phase}\u0000${n.node ?? ''}`;
      let entry = this.beside.get(key);
      if (!entry) this.beside.set(key, (entry = { ...n, gaps: 0, ms: 0 }));
      entry.gaps += 1;
      entry.ms += gap.gapMs;
    }
  }

  /** The tallies so far (copies). */
  value(): RequestDecodeSharing {
    return { soloGaps: this.soloGaps, soloMs: this.soloMs, neighbours: [...this.beside.values()].map((n) => ({ ...n })) };
  }
}
