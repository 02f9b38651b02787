/**
 * `exobar serve` running a real MLX runner on one of the tiny random-weight models
 * (electron/runners/mlx/tools/tiny_models.py), for tests that talk to it as users do.
 * The model is found where an operator's models are: a scratch Hugging Face hub cache
 * holding the tiny model (symlinks), and launched through the control API.
 *
 * The interpreter is `$EXOBAR_MLX_PYTHON` (CI sets it to the venv "Set up MLX runtime"
 * makes). Without it `realMlx()` says why, and the caller skips with one loud line (under
 * CI=true it fails instead: the real engine must be tested there).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from './eventually';
import { startServe, type ServeProcess } from './e2e/serve-process';
import { hubCacheWith, tinyMlxModel } from './tiny-mlx-hub';

/** A runner loading a model on a busy CPU may take this long. */
const LAUNCH_TIMEOUT_MS = 600_000;

/** The MLX venv's python, or why real MLX cannot run here. */
export function realMlx(): { python: string } | { missing: string } {
  const python = process.env.EXOBAR_MLX_PYTHON;
  if (!python) return { missing: 'EXOBAR_MLX_PYTHON is not set' };
  try {
    execFileSync(python, ['-c', 'import mlx.core, mlx_lm'], { timeout: 120_000 });
    return { python };
  } catch (error) {
    return { missing: `${python} cannot import mlx and mlx_lm: ${(error as Error).message.split('\n')[0]}` };
  }
}

export interface MlxServe {
  serve: ServeProcess;
  /** The model field requests carry (`mlx/exobar/tiny-<family>`). */
  model: string;
  /** The instance's entry of `GET /api/state`. */
  instance(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** `exobar serve` with `settings` (the MLX python added), the tiny model of `family` launched and ready. */
export async function startServeWithTinyMlx(options: { python: string; family: string; settings?: Record<string, unknown> }): Promise<MlxServe> {
  const root = mkdtempSync(join(tmpdir(), 'exobar-mlx-serve-'));
  const repo = `exobar/tiny-${options.family}`;
  const hub = hubCacheWith(tinyMlxModel(options.python, options.family), root, repo);
  const serve = await startServe({
    simTimeScale: 1,
    settings: { mlxPython: options.python, ...options.settings },
    env: { HF_HUB_CACHE: hub, HF_HUB_OFFLINE: '1', EXO_HOME: join(root, 'exo') },
  });
  const model = `mlx/${repo}`;
  const headers = { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' };
  const stop = async () => {
    await serve.stop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The model scan runs at start: a 404 until it has found the model.
    let id: string | undefined;
    const deadline = Date.now() + LAUNCH_TIMEOUT_MS;
    while (id === undefined) {
      const response = await fetch(`${serve.url}/api/instances?wait=ready&timeout_ms=${LAUNCH_TIMEOUT_MS}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model, acknowledgeMemory: true }),
      });
      const body = (await response.json()) as { id?: string };
      if (response.ok) id = body.id;
      else if (response.status !== 404 || Date.now() > deadline) throw new Error(`launching ${model}: ${response.status} ${JSON.stringify(body)}`);
      else await sleep(200);
    }
    const instance = async () => {
      const state = (await (await fetch(`${serve.url}/api/state`, { headers })).json()) as { instances: Record<string, unknown>[] };
      const found = state.instances.find((i) => i.id === id);
      if (!found) throw new Error(`instance ${id} is not in /api/state`);
      return found;
    };
    return { serve, model, instance, stop };
  } catch (error) {
    const output = serve.output();
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`, { cause: error });
  }
}
