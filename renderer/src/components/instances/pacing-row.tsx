import type { PacingSnapshot } from '../../../../shared/snapshot';

/** Neighbour names in words: "A", "A and B", "A, B and C". */
function names(neighbours: string[]): string {
  if (neighbours.length <= 1) return neighbours[0] ?? 'a neighbour';
  return `${neighbours.slice(0, -1).join(', ')} and ${neighbours.at(-1)}`;
}

/**
 * Shown while the sharing policy paces this model's prefill so a neighbour's stream on
 * the same GPU keeps flowing (docs/sharing-policy.md): who streams, and how it is paced.
 */
export function PacingRow({ pacing }: { pacing: PacingSnapshot }) {
  const chunk = pacing.chunkTokens === null ? 'its own chunks' : `chunks of ${pacing.chunkTokens} tokens`;
  // The figure that engaged it: the stream's live ITL beside this prefill over its solo ITL.
  const t = pacing.trigger;
  const because = t ? ` (${t.neighbour}'s ITL ${t.itlMs} ms, ${t.ratio.toFixed(2)}× its solo ${t.soloItlMs} ms)` : '';
  return (
    <div className="row pacing" data-testid="pacing" role="status">
      <span
        className="badge explained"
        title="sharing.policy decode_first: a neighbour's stream slowed beside this prefill, so it yields the GPU between chunks, bounded by a ceiling on its added time"
      >
        paced
      </span>
      <span className="muted">
        Prefill paced while {names(pacing.neighbours)} streams{because}: {chunk}, {pacing.pauseMs} ms pause after each
      </span>
    </div>
  );
}

/**
 * Shown while pacing cannot judge this model's stream: it compares the stream's ITL
 * beside a neighbour's prefill with the model's ITL alone, and none is known yet.
 */
export function PacingBaselineRow() {
  return (
    <div className="row pacing small muted" data-testid="pacing-baseline" role="status">
      Pacing waits for a baseline: this model's speed alone is not known yet (no stream without a neighbour seen, no calibrated figure), so a neighbour's
      prefill is not paced for it
    </div>
  );
}
