/**
 * The MLX models already on this Mac, as catalog entries.
 *
 * Where weights live: the Hugging Face hub cache (`models--org--name/snapshots/<rev>/`,
 * files usually symlinks into `blobs/`) and exo's model directory (`~/.exo/models/
 * org--name/`, exo's build_model_path). A model directory has a config.json naming a
 * model_type and at least one *.safetensors file. The runner resolves models the same
 * way (electron/runners/mlx/exobar_mlx/model_resolver.py) and never downloads one.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { CatalogModel } from '../../../shared/catalog';
import { exoModelsDir } from '../exo-process/exo-home';

const GiB = 1024 ** 3;
/** Weights plus KV cache and activations: memory needed ≈ size on disk × 1.2. */
export const MEMORY_PER_DISK_BYTE = 1.2;
/** Size classes by size on disk: Llama 3.2 1B 4-bit (~0.7 GB) is small, 3B 4-bit (~1.8 GB) medium. */
export const SMALL_BELOW_BYTES = 1 * GiB;
export const MEDIUM_BELOW_BYTES = 6 * GiB;

export interface LocalMlxModel extends CatalogModel {
  engine: 'mlx';
  path: string;
  /** The Hugging Face repo id ("org/name"), what the runner's --model also accepts. */
  repoId: string;
  diskBytes: number;
  source: 'hf-cache' | 'exo';
}

export interface ModelDirs {
  hubCacheDirs: string[];
  exoModelsDir: string;
}

/** Where to look, with the same precedence as huggingface_hub and exo. */
export function defaultModelDirs(env: NodeJS.ProcessEnv = process.env, home: string = homedir(), platform: NodeJS.Platform = process.platform): ModelDirs {
  const hub: string[] = [];
  if (env.HF_HUB_CACHE) hub.push(env.HF_HUB_CACHE);
  if (env.HUGGINGFACE_HUB_CACHE) hub.push(env.HUGGINGFACE_HUB_CACHE);
  if (env.HF_HOME) hub.push(join(env.HF_HOME, 'hub'));
  hub.push(join(env.XDG_CACHE_HOME || join(home, '.cache'), 'huggingface', 'hub'));
  // exo's own rules (EXO_DEFAULT_MODELS_DIR, EXO_HOME relative to HOME, the XDG data folder on Linux), as the process code reads them.
  return { hubCacheDirs: [...new Set(hub)], exoModelsDir: exoModelsDir({ ...env, HOME: env.HOME || home }, platform) };
}

/** Size class of a model by its size on disk. */
export function sizeClassFor(diskBytes: number): CatalogModel['sizeClass'] {
  if (diskBytes < SMALL_BELOW_BYTES) return 'small';
  if (diskBytes < MEDIUM_BELOW_BYTES) return 'medium';
  return 'large';
}

const ContextLengthSchema = z.number().int().positive().optional().catch(undefined);
const ConfigSchema = z.looseObject({
  model_type: z.string().min(1),
  // The context window; multimodal configs keep it under text_config. Unusable values count as unknown.
  max_position_embeddings: ContextLengthSchema,
  text_config: z.looseObject({ max_position_embeddings: ContextLengthSchema }).optional().catch(undefined),
});

/** The model's context length from its config.json, or undefined when it does not say. */
async function contextLengthOf(dir: string): Promise<number | undefined> {
  try {
    const parsed = ConfigSchema.safeParse(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')));
    if (!parsed.success) return undefined;
    return parsed.data.max_position_embeddings ?? parsed.data.text_config?.max_position_embeddings;
  } catch {
    return undefined;
  }
}

async function isModelDir(dir: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return false;
  }
  if (!names.includes('config.json') || !names.some((n) => n.endsWith('.safetensors'))) return false;
  try {
    return ConfigSchema.safeParse(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8'))).success;
  } catch {
    return false;
  }
}

/** Bytes of every file under `dir`, following symlinks (hub snapshots link into blobs/). */
async function diskSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    try {
      const info = await stat(path);
      if (info.isDirectory()) total += await diskSize(path);
      else if (info.isFile()) total += info.size;
    } catch {
      // A dangling symlink (an interrupted download): it takes no space.
    }
  }
  return total;
}

async function hubSnapshot(repoDir: string): Promise<string | null> {
  const snapshots = join(repoDir, 'snapshots');
  try {
    const main = (await readFile(join(repoDir, 'refs', 'main'), 'utf8')).trim();
    if (main && (await isModelDir(join(snapshots, main)))) return join(snapshots, main);
  } catch {
    // No refs/main: fall back to the newest complete snapshot.
  }
  let revisions: string[];
  try {
    revisions = await readdir(snapshots);
  } catch {
    return null;
  }
  let best: { path: string; mtime: number } | null = null;
  for (const revision of revisions) {
    const path = join(snapshots, revision);
    if (!(await isModelDir(path))) continue;
    const mtime = (await stat(path)).mtimeMs;
    if (!best || mtime > best.mtime) best = { path, mtime };
  }
  return best?.path ?? null;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** "org--name" → "org/name" (the first "--" separates them, as in repo_id.replace("/", "--")). */
function repoIdFrom(folder: string): string | null {
  const at = folder.indexOf('--');
  if (at <= 0 || at + 2 >= folder.length) return null;
  return `${folder.slice(0, at)}/${folder.slice(at + 2)}`;
}

/** The catalog id of a local MLX model: its Hugging Face repo under `mlx/`. */
export const MLX_MODEL_ID_PREFIX = 'mlx/';

async function toModel(repoId: string, path: string, diskBytes: number, source: LocalMlxModel['source']): Promise<LocalMlxModel> {
  const contextLength = await contextLengthOf(path);
  return {
    id: `${MLX_MODEL_ID_PREFIX}${repoId}`,
    name: repoId.split('/')[1] ?? repoId,
    engine: 'mlx',
    simulated: false,
    memoryBytes: Math.round(diskBytes * MEMORY_PER_DISK_BYTE),
    sizeClass: sizeClassFor(diskBytes),
    ...(contextLength ? { contextLength } : {}),
    path,
    repoId,
    diskBytes,
    source,
  };
}

/**
 * Lists local MLX models, smallest first. A repo found in several places is listed
 * once (hub cache first, then exo's directory). Unreadable folders are skipped.
 */
export async function scanLocalModels(dirs: ModelDirs = defaultModelDirs()): Promise<LocalMlxModel[]> {
  const found = new Map<string, LocalMlxModel>();
  for (const hub of dirs.hubCacheDirs) {
    for (const folder of await listDir(hub)) {
      if (!folder.startsWith('models--')) continue;
      const repoId = repoIdFrom(folder.slice('models--'.length));
      if (!repoId || found.has(repoId)) continue;
      const snapshot = await hubSnapshot(join(hub, folder));
      if (snapshot) found.set(repoId, await toModel(repoId, snapshot, await diskSize(snapshot), 'hf-cache'));
    }
  }
  for (const folder of await listDir(dirs.exoModelsDir)) {
    const repoId = repoIdFrom(folder);
    if (!repoId || found.has(repoId)) continue;
    const path = join(dirs.exoModelsDir, folder);
    if (await isModelDir(path)) found.set(repoId, await toModel(repoId, path, await diskSize(path), 'exo'));
  }
  return [...found.values()].sort((a, b) => a.diskBytes - b.diskBytes || a.id.localeCompare(b.id));
}
