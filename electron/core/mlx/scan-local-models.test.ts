import { mkdir, mkdtemp, rm, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultModelDirs, scanLocalModels, sizeClassFor } from './scan-local-models';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'exobar-scan-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Writes a model directory with weights of `weightBytes` (sparse files: no real disk use). */
async function modelDir(dir: string, weightBytes: number, modelType = 'llama'): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.json'), JSON.stringify({ model_type: modelType, num_hidden_layers: 16 }));
  await writeFile(join(dir, 'model.safetensors'), Buffer.alloc(0));
  await truncate(join(dir, 'model.safetensors'), weightBytes);
}

describe('scanLocalModels', () => {
  it('finds hub-cache snapshots (through blob symlinks) and exo models, with sizes and classes', async () => {
    const hub = join(root, 'hub');
    const repo = join(hub, 'models--mlx-community--Llama-3.2-1B-Instruct-4bit');
    await mkdir(join(repo, 'blobs'), { recursive: true });
    await writeFile(join(repo, 'blobs', 'abc'), Buffer.alloc(0));
    await truncate(join(repo, 'blobs', 'abc'), 700_000_000);
    const snap = join(repo, 'snapshots', 'rev1');
    await mkdir(snap, { recursive: true });
    await writeFile(join(snap, 'config.json'), JSON.stringify({ model_type: 'llama', max_position_embeddings: 131072 }));
    await symlink(join(repo, 'blobs', 'abc'), join(snap, 'model.safetensors'));
    await mkdir(join(repo, 'refs'));
    await writeFile(join(repo, 'refs', 'main'), 'rev1');

    const exo = join(root, 'exo', 'models');
    await modelDir(join(exo, 'mlx-community--Llama-3.2-3B-Instruct-4bit'), 1_800_000_000);
    await modelDir(join(exo, 'mlx-community--Llama-3.2-1B-Instruct-4bit'), 5); // duplicate of the hub one

    const models = await scanLocalModels({ hubCacheDirs: [hub, join(root, 'missing')], exoModelsDir: exo });
    expect(models.map((m) => [m.id, m.source, m.sizeClass])).toEqual([
      ['mlx/mlx-community/Llama-3.2-1B-Instruct-4bit', 'hf-cache', 'small'],
      ['mlx/mlx-community/Llama-3.2-3B-Instruct-4bit', 'exo', 'medium'],
    ]);
    const [small, medium] = models;
    expect(small).toMatchObject({
      engine: 'mlx',
      simulated: false,
      name: 'Llama-3.2-1B-Instruct-4bit',
      path: snap,
      repoId: 'mlx-community/Llama-3.2-1B-Instruct-4bit',
    });
    expect(small!.diskBytes).toBeGreaterThanOrEqual(700_000_000);
    expect(small!.memoryBytes).toBe(Math.round(small!.diskBytes * 1.2));
    expect(medium!.path).toBe(join(exo, 'mlx-community--Llama-3.2-3B-Instruct-4bit'));
    // The context window comes from config.json; a config without one leaves it unknown (not checked).
    expect(small!.contextLength).toBe(131072);
    expect(medium!.contextLength).toBeUndefined();
  });

  it('reads the context window of a multimodal config from text_config, and ignores a nonsensical one', async () => {
    const exo = join(root, 'exo', 'models');
    await mkdir(join(exo, 'org--vlm'), { recursive: true });
    await writeFile(join(exo, 'org--vlm', 'config.json'), JSON.stringify({ model_type: 'gemma3', text_config: { max_position_embeddings: 32768 } }));
    await writeFile(join(exo, 'org--vlm', 'model.safetensors'), '');
    await mkdir(join(exo, 'org--odd'), { recursive: true });
    await writeFile(join(exo, 'org--odd', 'config.json'), JSON.stringify({ model_type: 'llama', max_position_embeddings: 'long' }));
    await writeFile(join(exo, 'org--odd', 'model.safetensors'), '');
    const models = await scanLocalModels({ hubCacheDirs: [], exoModelsDir: exo });
    expect(Object.fromEntries(models.map((m) => [m.repoId, m.contextLength]))).toEqual({ 'org/vlm': 32768, 'org/odd': undefined });
  });

  it('skips incomplete downloads and non-models, and picks the newest complete snapshot without refs/main', async () => {
    const hub = join(root, 'hub');
    const repo = join(hub, 'models--org--model');
    await modelDir(join(repo, 'snapshots', 'old'), 10);
    await modelDir(join(repo, 'snapshots', 'new'), 20);
    const later = new Date(Date.now() + 60_000);
    await utimes(join(repo, 'snapshots', 'new'), later, later);
    await mkdir(join(repo, 'snapshots', 'partial'), { recursive: true });
    await writeFile(join(repo, 'snapshots', 'partial', 'config.json'), '{"model_type":"llama"}');
    await mkdir(join(hub, 'datasets--org--data'), { recursive: true });
    const noType = join(hub, 'models--org--not-a-model', 'snapshots', 'r');
    await mkdir(noType, { recursive: true });
    await writeFile(join(noType, 'config.json'), '{}');
    await writeFile(join(noType, 'x.safetensors'), '');
    const models = await scanLocalModels({ hubCacheDirs: [hub], exoModelsDir: join(root, 'none') });
    expect(models.map((m) => m.path)).toEqual([join(repo, 'snapshots', 'new')]);
  });

  it('returns nothing when no directory exists', async () => {
    expect(await scanLocalModels({ hubCacheDirs: [join(root, 'a')], exoModelsDir: join(root, 'b') })).toEqual([]);
  });

  it('looks where huggingface_hub and exo look', () => {
    expect(defaultModelDirs({}, '/Users/me', 'darwin')).toEqual({
      hubCacheDirs: ['/Users/me/.cache/huggingface/hub'],
      exoModelsDir: '/Users/me/.exo/models',
    });
    expect(defaultModelDirs({ HF_HOME: '/hf', HF_HUB_CACHE: '/cache', EXO_HOME: '/exo' }, '/Users/me', 'darwin')).toEqual({
      hubCacheDirs: ['/cache', '/hf/hub', '/Users/me/.cache/huggingface/hub'],
      exoModelsDir: '/exo/models',
    });
  });

  it("finds exo's models by exo's rules: EXO_HOME relative to HOME, the XDG data folder on Linux, EXO_DEFAULT_MODELS_DIR first", () => {
    expect(defaultModelDirs({ EXO_HOME: 'exo-b' }, '/Users/me', 'darwin').exoModelsDir).toBe('/Users/me/exo-b/models');
    expect(defaultModelDirs({}, '/home/me', 'linux').exoModelsDir).toBe('/home/me/.local/share/exo/models');
    expect(defaultModelDirs({ XDG_DATA_HOME: '/data' }, '/home/me', 'linux').exoModelsDir).toBe('/data/exo/models');
    expect(defaultModelDirs({ EXO_DEFAULT_MODELS_DIR: '~/m', EXO_HOME: 'exo-b' }, '/home/me', 'linux').exoModelsDir).toBe('/home/me/m');
  });

  it('classes sizes', () => {
    expect(sizeClassFor(0.7e9)).toBe('small');
    expect(sizeClassFor(1.8e9)).toBe('medium');
    expect(sizeClassFor(40e9)).toBe('large');
  });
});
