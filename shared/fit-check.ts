/**
 * The fit check's answer: the memory a launch needs against the memory this Mac has
 * free now, in figures and in words. Shared because the control API answers it, the
 * launch refusal carries it and the renderer shows it (electron/core/fit/ computes it).
 */
import { z } from 'zod';

/** The context length a fit check assumes when the operator picks none. */
export const DEFAULT_FIT_CONTEXT_TOKENS = 8192;

export const FitModelEstimateSchema = z.object({
  model: z.string(),
  /** Weights: the *.safetensors files on disk, or the catalog's figure for a sim model. */
  weightsBytes: z.number().nonnegative(),
  /** The KV cache (and any constant recurrent state) at `contextTokens`; null when the config does not say. */
  kvCacheBytes: z.number().nonnegative().nullable(),
  contextTokens: z.number().int().positive(),
  /**
   * The runner's prompt cache cap (the setting `runner.promptCacheBytes`; by default the
   * KV cache figure above, 0 when that is unknown or the cache is off). A cap set in the
   * settings is part of `neededBytes`; the default one is the KV figure the need already
   * holds. Absent from older answers.
   */
  promptCacheBytes: z.number().nonnegative().optional(),
  /** Weights plus KV cache, plus the prompt cache's cap when the settings set one. */
  neededBytes: z.number().nonnegative(),
  /** Where the weights figure came from: the files on disk, the catalog (sim), or exo's model size (a cluster's Mac). */
  weightsSource: z.enum(['disk', 'catalog', 'exo']),
});
export type FitModelEstimate = z.infer<typeof FitModelEstimateSchema>;

export const FitCheckSchema = z.object({
  /** True when every model fits in free memory (after headroom) and under the GPU's wired limit. */
  fits: z.boolean(),
  models: z.array(FitModelEstimateSchema),
  /** The models' total need. */
  neededBytes: z.number().nonnegative(),
  /** Memory the OS says is free now (before headroom). */
  freeBytes: z.number().nonnegative(),
  /** Kept free beyond the models' need. */
  headroomBytes: z.number().nonnegative(),
  /** The GPU's wired limit (Metal's recommended working set); null where there is none (not a Mac). */
  gpuLimitBytes: z.number().nonnegative().nullable(),
  /** What the instances already on the GPU are estimated to use of that limit. */
  gpuInUseBytes: z.number().nonnegative(),
  /** "needs 6.1 GiB; 18.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 16.0 GiB usable" (and the GPU limit on a Mac): shared/memory-words.ts. */
  summary: z.string(),
  /** Why it does not fit, in words; empty when it fits. */
  problems: z.array(z.string()),
  /** What launching anyway risks, in words; null when it fits. */
  risk: z.string().nullable(),
});
export type FitCheck = z.infer<typeof FitCheckSchema>;
