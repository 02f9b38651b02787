/**
 * How one interleaved prefill chunk is shared by the prompts prefilling, as the MLX
 * runner shares it (electron/runners/mlx/exobar_mlx/interleaved_loop.py): in arrival
 * order, the prompts at the same offset as the first one with tokens left go together
 * (one pass over the same number of tokens from each: prompts waiting together are
 * prefilled together and end together), each taking an equal share of the chunk (at
 * least MIN_STACKED_ROW_TOKENS in a pass of several), capped by the shortest rest of the
 * group; what the chunk has left goes to the next group. Prompts at most
 * CATCH_UP_CHUNKS chunks behind the first go before it, those farthest behind first, up
 * to the next offset a prompt is at, where they join it.
 */
import { CATCH_UP_CHUNKS, MIN_STACKED_ROW_TOKENS } from '../../../shared/runner-protocol';

export interface PrefillRow {
  /** Prompt tokens in its cache already (cached and prefilled). */
  offset: number;
  /** Prompt tokens still to prefill. */
  rest: number;
}

interface Row extends PrefillRow {
  got: number;
}

/** The tokens each row gets from a chunk of `budget` tokens (same order as `rows`). */
export function shareChunk(rows: readonly PrefillRow[], budget: number): number[] {
  const left: Row[] = rows.map((r) => ({ offset: r.offset, rest: r.rest, got: 0 }));
  const catchUp = CATCH_UP_CHUNKS * budget;
  let touched = false;
  while (budget > 0) {
    const pending = left.filter((r) => r.rest > 0);
    if (pending.length === 0) break;
    const { group, cap } = nextGroup(pending, catchUp);
    const share = Math.floor(budget / group.length);
    const floor = group.length > 1 ? MIN_STACKED_ROW_TOKENS : 1;
    // The chunk is spent: too little is left for the next group.
    if (share < floor && touched) break;
    const each = Math.min(Math.max(floor, share), cap, ...group.map((r) => r.rest));
    for (const r of group) {
      r.offset += each;
      r.rest -= each;
      r.got += each;
    }
    budget -= each * group.length;
    touched = true;
  }
  return left.map((r) => r.got);
}

/** The rows the next pass takes, and how far each may go (a catching-up group stops where the next one is). */
function nextGroup(pending: Row[], catchUp: number): { group: Row[]; cap: number } {
  const lead = pending[0]!;
  const behind = pending.filter((r) => r.offset < lead.offset && r.offset >= lead.offset - catchUp);
  const first = behind.reduce((a, b) => (b.offset < a.offset ? b : a), behind[0] ?? lead);
  const group = pending.filter((r) => r.offset === first.offset);
  if (behind.length === 0) return { group, cap: Infinity };
  return { group, cap: Math.min(...pending.filter((r) => r.offset > first.offset).map((r) => r.offset)) - first.offset };
}
