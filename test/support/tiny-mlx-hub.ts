/**
 * A tiny random-weight MLX model (electron/runners/mlx/tools/tiny_models.py) where
 * exobar's model scan finds an operator's models: a scratch Hugging Face hub cache
 * holding it as `models--<org>--<name>` (symlinks to its files), so `exobar serve` with
 * `HF_HUB_CACHE` pointing there serves it as `mlx/<org>/<name>`. The bench and the
 * real-MLX serve tests share it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../electron/core/package-root';

/** The tiny model of `family`'s directory, made (or reused) by tiny_models.py with the MLX venv's `python`. */
export function tinyMlxModel(python: string, family: string): string {
  const tools = join(packageRoot(), 'electron', 'runners', 'mlx', 'tools', 'tiny_models.py');
  const out = execFileSync(python, [tools, '--family', family], { encoding: 'utf8', timeout: 300_000 });
  return out.trim().split('\n')[0]!.split('\t')[1]!;
}

/** A hub cache under `root` holding `modelDir` as the repo `repo` ("org/name"); returns the cache's directory. */
export function hubCacheWith(modelDir: string, root: string, repo: string): string {
  const hub = join(root, 'hub');
  const snapshot = join(hub, `models--${repo.replace('/', '--')}`, 'snapshots', 'tiny');
  mkdirSync(snapshot, { recursive: true });
  for (const file of readdirSync(modelDir)) symlinkSync(join(modelDir, file), join(snapshot, file));
  return hub;
}
