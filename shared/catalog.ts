/**
 * The model catalog: every model exobar can launch, with its size and engine.
 *
 * Sim models run everywhere; their timings are calibrated to the measurement in
 * exo's supervisor fix (Mac Studio M3 Ultra: Llama-3.2-1B answers a short prompt in
 * 0.23 s alone and 0.38-0.40 s while the 3B prefills; the 3B prefills ~30k tokens in ~19 s).
 */
import { z } from 'zod';
import { EngineSchema } from './snapshot';

/** The engines a local runner can run (the schema is the snapshot's). */
export type Engine = z.infer<typeof EngineSchema>;

/** How long the sim takes, in real seconds at time scale 1. */
export const SimTimingsSchema = z.object({
  /** CPU-side work per admitted request (tokenizing, templating): not on the GPU. */
  admitOverheadS: z.number().nonnegative(),
  /**
   * GPU time every prefill pays whatever its length (graph build, cache setup, first
   * kernels). With admitOverheadS it sets a short prompt's time to first token; being GPU
   * work, it is what stretches when another model computes (0.23 s alone vs 0.38-0.40 s
   * beside a prefilling 3B means about 0.16 s of a short request is GPU work).
   */
  prefillFixedS: z.number().nonnegative(),
  /** Prefill throughput on an idle GPU. */
  prefillTokensPerS: z.number().positive(),
  /** One decode step for a batch of one, on an idle GPU. */
  decodeStepS: z.number().nonnegative(),
  /** Extra decode-step time per additional request in the batch, as a fraction. */
  batchStepGrowth: z.number().nonnegative(),
  /** Layers reported while loading, and the time to load them. */
  totalLayers: z.number().int().positive(),
  loadS: z.number().nonnegative(),
  warmupS: z.number().nonnegative(),
});
export type SimTimings = z.infer<typeof SimTimingsSchema>;

/** What a model's KV cache costs per token: layers x KV heads x head size x 2 (keys and values) x bytes per value. */
export const KvCacheDimsSchema = z.object({
  layers: z.number().int().positive(),
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  bytesPerValue: z.number().positive(),
});
export type KvCacheDims = z.infer<typeof KvCacheDimsSchema>;

/** One token's KV cache across every layer, bytes (the fit check's and the sim's prompt cache's figure). */
export function kvBytesPerToken(dims: KvCacheDims): number {
  return dims.layers * kvBytesPerTokenPerLayer(dims);
}

/** One token's keys and values in one layer, bytes. */
export function kvBytesPerTokenPerLayer(dims: KvCacheDims): number {
  return dims.kvHeads * dims.headDim * 2 * dims.bytesPerValue;
}

/**
 * One model of the catalog, as the server lists it (`GET /api/models`) and the page
 * checks it: loose, so a field a newer server adds passes through.
 */
export const CatalogModelSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  engine: EngineSchema,
  /** True for the sim engine: shown as simulated wherever the model appears. */
  simulated: z.boolean(),
  /** Memory the runner needs once loaded (weights plus working set), bytes. */
  memoryBytes: z.number().finite().nonnegative(),
  /** Size class, used to pick the safe pair's default (small and medium). */
  sizeClass: z.enum(['small', 'medium', 'large']),
  /**
   * Most tokens the model takes, prompt and completion together (its context window).
   * A request that cannot fit is refused (`context_length_exceeded`); unknown: not checked.
   */
  contextLength: z.number().positive().optional(),
  sim: SimTimingsSchema.optional(),
  /**
   * The KV cache's dimensions, for the fit check of a model with no config.json to read
   * (the sim models take the real model's). MLX models are read from their directory.
   */
  kvCache: KvCacheDimsSchema.optional(),
  /** For mlx models: the local directory holding the weights. */
  path: z.string().optional(),
});
export type CatalogModel = z.infer<typeof CatalogModelSchema>;

const GiB = 1024 ** 3;

export const SIM_MODELS: readonly CatalogModel[] = [
  {
    id: 'sim/llama-3.2-1b',
    name: 'Llama 3.2 1B (simulated)',
    engine: 'sim',
    simulated: true,
    memoryBytes: Math.round(1.4 * GiB),
    sizeClass: 'small',
    // Llama 3.2's context window (max_position_embeddings).
    contextLength: 131_072,
    // Llama 3.2 1B's config.json: 16 layers, 8 KV heads of 64, bfloat16.
    kvCache: { layers: 16, kvHeads: 8, headDim: 64, bytesPerValue: 2 },
    sim: {
      admitOverheadS: 0.07,
      prefillFixedS: 0.154,
      prefillTokensPerS: 12_000,
      decodeStepS: 0.004,
      batchStepGrowth: 0.08,
      totalLayers: 16,
      loadS: 0.8,
      warmupS: 0.2,
    },
  },
  {
    id: 'sim/llama-3.2-3b',
    name: 'Llama 3.2 3B (simulated)',
    engine: 'sim',
    simulated: true,
    memoryBytes: Math.round(3.4 * GiB),
    sizeClass: 'medium',
    contextLength: 131_072,
    // Llama 3.2 3B's config.json: 28 layers, 8 KV heads of 128, bfloat16.
    kvCache: { layers: 28, kvHeads: 8, headDim: 128, bytesPerValue: 2 },
    sim: {
      admitOverheadS: 0.07,
      prefillFixedS: 0.154,
      prefillTokensPerS: 1_590,
      decodeStepS: 0.009,
      batchStepGrowth: 0.08,
      totalLayers: 28,
      loadS: 1.5,
      warmupS: 0.3,
    },
  },
];

export function findSimModel(id: string): CatalogModel | undefined {
  return SIM_MODELS.find((m) => m.id === id);
}
