/**
 * How one interleaved prefill chunk is shared by the prompts prefilling, as the MLX
 * runner shares it (electron/runners/mlx/exobar_mlx/interleaved_loop.py): in arrival
 * order, the prompts at the same offset as the first one with tokens left go together
 * (one pass over the same number of tokens from each: prompts waiting together are
 * prefilled together and end together), each taking an equal share of the chunk, capped
 * by the shortest rest of the group; what the chunk has left goes to the next group.
 */
export interface PrefillRow {
  /** Prompt tokens in its cache already (cached and prefilled). */
  offset: number;
  /** Prompt tokens still to prefill. */
  rest: number;
}

/** The tokens each row gets from a chunk of `budget` tokens (same order as `rows`). */
export function shareChunk(rows: readonly PrefillRow[], budget: number): number[] {
  const left = rows.map((r) => ({ offset: r.offset, rest: r.rest, got: 0 }));
  let touched = false;
  while (budget > 0) {
    const lead = left.find((r) => r.rest > 0);
    if (!lead) break;
    const group = left.filter((r) => r.rest > 0 && r.offset === lead.offset);
    const share = Math.floor(budget / group.length);
    // The chunk is spent: too little is left to give each prompt of the group a token.
    if (share === 0 && touched) break;
    const each = Math.min(Math.max(1, share), ...group.map((r) => r.rest));
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
