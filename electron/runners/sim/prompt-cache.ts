/**
 * The sim's prompt cache (docs/runner-protocol.md, "Prompt cache"): what mlx-lm's server
 * keeps in its LRUPromptCache, reduced to what the sim needs to behave the same. An entry
 * is a finished prefill's prompt tokens; it costs tokens x the model's KV bytes per token
 * (the catalog's `kvCache`, the fit check's figure). A prompt hits when a stored prompt is
 * a prefix of it (or it is a prefix of a stored one); the hit serves all the matched tokens
 * but the prompt's last, whose logits start the answer. Entries are used least recently
 * first out, until the bytes fit the cap; only a whole prefill is ever stored, so a
 * cancelled request's partial prefill is never served to another. Written by hand: the
 * sim holds no tensors, only token lists, and the bookkeeping is a few lines.
 */
import type { PromptCacheStats } from '../../../shared/runner-protocol';

interface Entry {
  tokens: readonly string[];
  bytes: number;
}

export class SimPromptCache {
  /** Least recently used first. */
  private entries: Entry[] = [];
  private hits = 0;
  private misses = 0;
  private hitTokens = 0;

  constructor(
    /** The cap in bytes; 0 keeps nothing (and the runner says the cache is off). */
    readonly capBytes: number,
    private readonly bytesPerToken: number,
  ) {}

  get enabled(): boolean {
    return this.capBytes > 0;
  }

  /** The prompt tokens the cache serves for `prompt` (0 on a miss), counting the hit or the miss. */
  lookup(prompt: readonly string[]): number {
    if (!this.enabled) return 0;
    let best: Entry | null = null;
    let bestTokens = 0;
    for (const entry of this.entries) {
      const shared = sharedPrefix(entry.tokens, prompt);
      // A stored prompt must match whole, unless the new prompt is the shorter one.
      if (shared !== entry.tokens.length && shared !== prompt.length) continue;
      const served = Math.min(shared, prompt.length - 1);
      if (served > bestTokens) {
        best = entry;
        bestTokens = served;
      }
    }
    if (best === null) {
      this.misses += 1;
      return 0;
    }
    this.touch(best);
    this.hits += 1;
    this.hitTokens += bestTokens;
    return bestTokens;
  }

  /** Stores a finished prefill's prompt; stored prompts it extends are dropped (it serves their hits too). */
  store(prompt: readonly string[]): void {
    if (!this.enabled) return;
    const bytes = prompt.length * this.bytesPerToken;
    if (bytes > this.capBytes) return;
    this.entries = this.entries.filter((e) => sharedPrefix(e.tokens, prompt) !== e.tokens.length);
    this.entries.push({ tokens: [...prompt], bytes });
    let total = this.bytes();
    while (total > this.capBytes && this.entries.length > 0) total -= this.entries.shift()!.bytes;
  }

  stats(): PromptCacheStats {
    return {
      type: 'PromptCacheStats',
      entries: this.entries.length,
      bytes: this.bytes(),
      capBytes: this.capBytes,
      hits: this.hits,
      misses: this.misses,
      hitTokens: this.hitTokens,
    };
  }

  private bytes(): number {
    return this.entries.reduce((sum, e) => sum + e.bytes, 0);
  }

  private touch(entry: Entry): void {
    this.entries = [...this.entries.filter((e) => e !== entry), entry];
  }
}

function sharedPrefix(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
