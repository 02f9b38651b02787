/**
 * How a local instance's runner serves, as the snapshot and the model's card show it: its
 * schedule and its prompt cache (docs/runner-protocol.md, "Schedules" and "Prompt cache").
 * Built from the runner's hello and its PromptCacheStats events (shared/runner-protocol.ts).
 */
import { z } from 'zod';
import { formatMemory } from './memory-words';
import { RunnerScheduleSchema, SimProfileNameSchema } from './runner-protocol';

export const PromptCacheSnapshotSchema = z.object({
  /** The cap the runner was started with; 0: the cache is off. */
  capBytes: z.number().nonnegative(),
  /** False when the runner refused the cache for this model's cache family; `reason` says why. */
  supported: z.boolean(),
  reason: z.string().nullable(),
  entries: z.number().int().nonnegative(),
  bytes: z.number().nonnegative(),
  hits: z.number().int().nonnegative(),
  misses: z.number().int().nonnegative(),
  /** Prompt tokens served from the cache since the runner started. */
  hitTokens: z.number().int().nonnegative(),
});
export type PromptCacheSnapshot = z.infer<typeof PromptCacheSnapshotSchema>;

/** The runner's serving engine: null before its first hello. */
export const RunnerEngineSnapshotSchema = z.object({
  schedule: RunnerScheduleSchema,
  /** A sim runner's calibrated timing profile (setting `runner.simProfile`); null: its model's own figures, or not a sim. */
  simProfile: SimProfileNameSchema.nullable(),
  /** Null when the runner has no prompt cache at all (a protocol-2 runner). */
  promptCache: PromptCacheSnapshotSchema.nullable(),
});
export type RunnerEngineSnapshot = z.infer<typeof RunnerEngineSnapshotSchema>;

/** Share of looked-up prompts the cache served; null before any lookup. */
export function promptCacheHitRate(cache: PromptCacheSnapshot): number | null {
  const lookups = cache.hits + cache.misses;
  return lookups > 0 ? cache.hits / lookups : null;
}

/** The card's words: "prompt cache 0.2 / 1.0 GB, 75% hits", "prompt cache off", or the refusal's reason. */
export function promptCacheWords(cache: PromptCacheSnapshot | null): string {
  if (cache === null) return 'no prompt cache (older runner)';
  if (!cache.supported) return `no prompt cache: ${cache.reason ?? 'not supported for this model'}`;
  if (cache.capBytes === 0) return 'prompt cache off';
  const rate = promptCacheHitRate(cache);
  const hits = rate === null ? 'no lookups yet' : `${Math.round(rate * 100)}% hits`;
  return `prompt cache ${formatMemory(cache.bytes)} / ${formatMemory(cache.capBytes)}, ${hits}`;
}
