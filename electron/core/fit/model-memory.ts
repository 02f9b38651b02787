/**
 * What one model needs in memory: its weights plus its KV cache at a context length.
 *
 * Weights are the *.safetensors files in the model's directory (what MLX maps in), or
 * the catalog's figure for a sim model. The KV cache per token is, for each layer that
 * keeps one, KV heads x head size x 2 (keys and values) x bytes per value, read from
 * the model's config.json. The cache classes mlx-lm makes decide which layers keep how
 * much (mlx_lm/models/*.py make_cache): sliding-window and chunked layers keep at most
 * their window, hybrid models only their attention layers, state-space layers a
 * constant state.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { kvBytesPerTokenPerLayer, type CatalogModel } from '../../../shared/catalog';
import type { FitModelEstimate } from '../../../shared/fit-check';

const count = z.number().int().positive().optional().catch(undefined);

const TextConfigSchema = z.looseObject({
  model_type: z.string().optional().catch(undefined),
  num_hidden_layers: count,
  num_attention_heads: count,
  num_key_value_heads: count,
  hidden_size: count,
  head_dim: count,
  torch_dtype: z.string().optional().catch(undefined),
  sliding_window: count,
  sliding_window_pattern: count,
  attention_chunk_size: count,
  full_attn_idxs: z.array(z.number().int().nonnegative()).optional().catch(undefined),
  // mamba2: the recurrent state per layer is heads x head size x state size.
  num_heads: count,
  state_size: count,
});
const ConfigSchema = TextConfigSchema.extend({ text_config: TextConfigSchema.optional().catch(undefined) });
type TextConfig = z.infer<typeof TextConfigSchema>;

/** The KV cache's shape, from a config: per-token bytes of each layer and a cap on its tokens. */
export interface KvCacheShape {
  /** One entry per layer that keeps keys and values. */
  layers: { bytesPerToken: number; maxTokens: number | null }[];
  /** Bytes kept whatever the context (recurrent state). */
  constantBytes: number;
}

/** Bytes per cached value: float32 configs keep 4, everything else (bf16, fp16, quantized weights) 2. */
function bytesPerValue(dtype: string | undefined): number {
  return dtype === 'float32' ? 4 : 2;
}

/**
 * The KV cache shape a config.json describes, or null when it lacks the figures (layers,
 * heads): such a model's cache is unknown, not guessed.
 */
export function kvCacheShape(rawConfig: unknown): KvCacheShape | null {
  const parsed = ConfigSchema.safeParse(rawConfig);
  if (!parsed.success) return null;
  const top = parsed.data;
  const c: TextConfig = top.text_config ? { ...top.text_config, torch_dtype: top.text_config.torch_dtype ?? top.torch_dtype } : top;
  const layers = c.num_hidden_layers;
  if (!layers) return null;
  const bytes = bytesPerValue(c.torch_dtype);
  const type = c.model_type ?? top.model_type ?? '';

  if (type === 'mamba2' || type === 'mamba') {
    if (!c.num_heads || !c.head_dim || !c.state_size) return null;
    return { layers: [], constantBytes: layers * c.num_heads * c.head_dim * c.state_size * bytes };
  }
  const heads = c.num_attention_heads;
  if (!heads) return null;
  const kvHeads = c.num_key_value_heads ?? heads;
  const headDim = c.head_dim ?? (c.hidden_size ? Math.floor(c.hidden_size / heads) : undefined);
  if (!headDim) return null;
  const perToken = kvHeads * headDim * 2 * bytes;

  const capOf = (i: number): number | null => {
    if (type.startsWith('gemma3') && c.sliding_window) {
      const pattern = c.sliding_window_pattern ?? 6;
      return i % pattern === pattern - 1 ? null : c.sliding_window;
    }
    if (type.startsWith('llama4') && c.attention_chunk_size) return (i + 1) % 4 !== 0 ? c.attention_chunk_size : null;
    return null;
  };
  const attention = type === 'lfm2' && c.full_attn_idxs ? c.full_attn_idxs.filter((i) => i < layers) : [...Array(layers).keys()];
  return { layers: attention.map((i) => ({ bytesPerToken: perToken, maxTokens: capOf(i) })), constantBytes: 0 };
}

/** The cache's bytes at `tokens` of context. */
export function kvCacheBytes(shape: KvCacheShape, tokens: number): number {
  return shape.constantBytes + shape.layers.reduce((sum, l) => sum + l.bytesPerToken * (l.maxTokens === null ? tokens : Math.min(tokens, l.maxTokens)), 0);
}

/** Bytes of the *.safetensors files in `dir` (symlinks followed: hub snapshots link into blobs/). */
export async function weightsOnDisk(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.safetensors')) continue;
    try {
      total += (await stat(join(dir, name))).size;
    } catch {
      // A dangling symlink (an interrupted download) holds no weights.
    }
  }
  return total;
}

/**
 * The prompt cache's cap for a model (docs/fit-check.md): the setting `runner.promptCacheBytes`
 * when it says a number (0: off), else (null) the model's KV cache at the fit context,
 * so one full context of prefixes stays cached; 0 when that figure is unknown.
 */
export function promptCacheCapBytes(setting: number | null, kvCacheBytes: number | null): number {
  if (setting !== null) return setting;
  return Math.round(kvCacheBytes ?? 0);
}

/**
 * The memory `model` needs at `contextTokens` (capped at its context window), with its
 * runner's prompt cache capped by `promptCacheSetting` ({@link promptCacheCapBytes}). An MLX
 * model is read from its directory; a sim model takes the catalog's figures
 * (`memoryBytes` and `kvCache`). Never throws: an unreadable config gives a null cache.
 */
export async function estimateModelMemory(model: CatalogModel, contextTokens: number, promptCacheSetting: number | null = null): Promise<FitModelEstimate> {
  const tokens = Math.max(1, Math.min(Math.round(contextTokens), model.contextLength ?? Number.MAX_SAFE_INTEGER));
  let weightsBytes = model.memoryBytes;
  let weightsSource: FitModelEstimate['weightsSource'] = 'catalog';
  let shape: KvCacheShape | null = null;
  if (model.engine === 'mlx' && model.path) {
    try {
      weightsBytes = await weightsOnDisk(model.path);
      weightsSource = 'disk';
    } catch {
      // The directory went away: the catalog's figure is the best left.
    }
    try {
      shape = kvCacheShape(JSON.parse(await readFile(join(model.path, 'config.json'), 'utf8')));
    } catch {
      shape = null;
    }
  } else if (model.kvCache) {
    const k = model.kvCache;
    shape = {
      layers: Array.from({ length: k.layers }, () => ({ bytesPerToken: kvBytesPerTokenPerLayer(k), maxTokens: null })),
      constantBytes: 0,
    };
  }
  const kv = shape ? kvCacheBytes(shape, tokens) : null;
  const promptCacheBytes = promptCacheCapBytes(promptCacheSetting, kv);
  return {
    model: model.id,
    weightsBytes,
    kvCacheBytes: kv,
    contextTokens: tokens,
    promptCacheBytes,
    // A cap the operator set is memory on top of everything else; the default cap is the
    // KV figure itself, which the need already holds once (docs/fit-check.md says why).
    neededBytes: weightsBytes + (kv ?? 0) + (promptCacheSetting ?? 0),
    weightsSource,
  };
}
