/**
 * The memory estimate against the tiny real models (electron/runners/mlx/tools/
 * tiny_models.py: their config.json and safetensors as mlx-lm writes them) and the
 * catalog's Llama 3.2 1B/3B figures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SIM_MODELS, type CatalogModel } from '../../../shared/catalog';
import { estimateModelMemory, kvCacheBytes, kvCacheShape } from './model-memory';

const REPO_ROOT = resolve(__dirname, '../../..');
const TOOLS = join(REPO_ROOT, 'electron', 'runners', 'mlx', 'tools', 'tiny_models.py');
const GiB = 1024 ** 3;

/** The tiny models' directories, built (or reused) by the same tool the MLX tests use. */
function tinyModels(): Record<string, string> | null {
  const python = process.env.EXOBAR_MLX_PYTHON;
  if (!python) return null;
  const out = execFileSync(python, [TOOLS], { encoding: 'utf8', timeout: 300_000, cwd: REPO_ROOT });
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((line) => line.split('\t') as [string, string]),
  );
}

const dirs = tinyModels();
const mlxModel = (family: string, dir: string): CatalogModel => ({
  id: `mlx/tiny-${family}`,
  name: family,
  engine: 'mlx',
  simulated: false,
  memoryBytes: 1,
  sizeClass: 'small',
  contextLength: 65_536,
  path: dir,
});

describe.skipIf(dirs === null)('memory estimate of the tiny real MLX models (needs EXOBAR_MLX_PYTHON)', () => {
  const config = (family: string): unknown => JSON.parse(readFileSync(join(dirs![family]!, 'config.json'), 'utf8'));

  it('llama: every layer keeps 2 KV heads x 16 x 2 x 4 bytes (float32) per token', () => {
    const shape = kvCacheShape(config('llama'))!;
    expect(shape.layers).toHaveLength(4);
    expect(kvCacheBytes(shape, 1000)).toBe(4 * 2 * 16 * 2 * 4 * 1000);
  });

  it('llama: weights are the safetensors on disk, the parameter count x 4 bytes plus its header', async () => {
    // embed + lm_head (1007 x 64 each), 4 layers of q,k,v,o + 3 MLP matrices + 2 norms, the final norm.
    const params = 2 * 1007 * 64 + 4 * (64 * 64 + 64 * 32 + 64 * 32 + 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64;
    const estimate = await estimateModelMemory(mlxModel('llama', dirs!.llama!), 1000);
    expect(estimate.weightsSource).toBe('disk');
    expect(estimate.weightsBytes).toBeGreaterThanOrEqual(params * 4);
    expect(estimate.weightsBytes).toBeLessThan(params * 4 + 16_384);
    expect(estimate.neededBytes).toBe(estimate.weightsBytes + 4 * 2 * 16 * 2 * 4 * 1000);
  });

  it('gemma3: the sliding layers keep at most their 32-token window, the global ones every token', () => {
    const shape = kvCacheShape(config('gemma3'))!;
    const perLayerToken = 2 * 16 * 2 * 4;
    // sliding_window_pattern 2: layers 1 and 3 are global (KVCache), 0 and 2 rotate over 32 tokens.
    expect(kvCacheBytes(shape, 1000)).toBe(perLayerToken * (2 * 1000 + 2 * 32));
  });

  it('lfm2: only the attention layers (full_attn_idxs) keep a KV cache; head size from hidden/heads', () => {
    const shape = kvCacheShape(config('lfm2'))!;
    expect(shape.layers).toHaveLength(2);
    expect(kvCacheBytes(shape, 1000)).toBe(2 * 2 * (64 / 4) * 2 * 4 * 1000);
  });

  it('llama4 (text_config): three of every four layers are chunked to 32 tokens', () => {
    const shape = kvCacheShape(config('llama4'))!;
    expect(kvCacheBytes(shape, 1000)).toBe(2 * 16 * 2 * 4 * (1000 + 3 * 32));
  });

  it('mamba2: a constant state, whatever the context', () => {
    const shape = kvCacheShape(config('mamba2'))!;
    expect(shape.layers).toHaveLength(0);
    expect(kvCacheBytes(shape, 10)).toBe(kvCacheBytes(shape, 60_000));
    expect(kvCacheBytes(shape, 10)).toBe(4 * 8 * 16 * 16 * 4);
  });

  it('caps the context at the model window', async () => {
    const estimate = await estimateModelMemory(mlxModel('llama', dirs!.llama!), 1_000_000);
    expect(estimate.contextTokens).toBe(65_536);
  });
});

describe('memory estimate of the catalog models', () => {
  const [small, medium] = SIM_MODELS as [CatalogModel, CatalogModel];

  it('Llama 3.2 1B at 8192 tokens: 1.4 GiB of weights + 16 x 8 x 64 x 2 x 2 bytes x 8192 (0.25 GiB)', async () => {
    const e = await estimateModelMemory(small, 8192);
    expect(e.weightsSource).toBe('catalog');
    expect(e.kvCacheBytes).toBe(16 * 8 * 64 * 2 * 2 * 8192);
    expect(e.kvCacheBytes! / GiB).toBe(0.25);
    expect(e.neededBytes).toBe(small.memoryBytes + 0.25 * GiB);
  });

  it('Llama 3.2 3B at 8192 tokens: 3.4 GiB + 28 x 8 x 128 x 2 x 2 bytes x 8192 (0.875 GiB)', async () => {
    const e = await estimateModelMemory(medium, 8192);
    expect(e.kvCacheBytes! / GiB).toBe(0.875);
    expect(e.neededBytes).toBe(medium.memoryBytes + 0.875 * GiB);
  });

  it('a model with no KV dimensions and no config has an unknown cache, weights only', async () => {
    const e = await estimateModelMemory({ ...small, kvCache: undefined }, 8192);
    expect(e.kvCacheBytes).toBeNull();
    expect(e.neededBytes).toBe(small.memoryBytes);
  });

  it('a config without layer or head counts gives no shape rather than a guess', () => {
    expect(kvCacheShape({ model_type: 'llama', hidden_size: 64 })).toBeNull();
    expect(kvCacheShape('not a config')).toBeNull();
  });
});
