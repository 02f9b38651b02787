/**
 * The two servers the engine bench compares, each started as its user starts it and
 * serving the same tiny real model (tools/tiny_models.py's `llama-wide`, random weights,
 * CPU): `mlx_lm.server` from the MLX venv (mlx-lm brings it, nothing is installed), and
 * `exobar serve` (the built command line) with the model found where an operator's
 * models are (a Hugging Face hub cache, here a scratch one holding the tiny model) and
 * launched through the control API. The phase keeps both up (the idle one waits on its
 * socket) and runs each scenario on both back to back; `stop` ends a server and its runners.
 * The process that computes runs in its own session for both (exobar's runner is
 * spawned detached, so mlx_lm.server is too): the same scheduling for both sides.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { packageRoot } from '../electron/core/package-root';
import { eventually } from '../test/support/eventually';
import { freePort } from '../test/support/free-port';
import { hubCacheWith, tinyMlxModel } from '../test/support/tiny-mlx-hub';

export type EngineServerName = 'exobar' | 'mlx_lm';

export interface EngineServer {
  name: EngineServerName;
  /** The OpenAI-compatible base URL (`.../v1`). */
  baseURL: string;
  /** The model field requests carry. */
  model: string;
  stop(): Promise<void>;
}

/** The hub-cache repo the tiny model is filed under for exobar's model scan. */
const TINY_REPO = 'exobar/tiny-llama-wide';
/** A server loading a model on this CPU may take this long to answer. */
const START_TIMEOUT_MS = 600_000;

/** The tiny llama-wide model's directory (made, or reused, by tiny_models.py). */
export function tinyLlamaWide(python: string): string {
  return tinyMlxModel(python, 'llama-wide');
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode != null || child.signalCode != null ? resolve() : child.once('exit', () => resolve())));
}

async function stopChild(child: ChildProcess): Promise<void> {
  const done = exited(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await done;
  clearTimeout(timer);
}

/** `python -m mlx_lm.server --model DIR` on a free loopback port, answering once its model is loaded. */
export async function startMlxLmServer(python: string, modelDir: string, log: (line: string) => void): Promise<EngineServer> {
  const port = await freePort();
  const child = spawn(python, ['-m', 'mlx_lm.server', '--model', modelDir, '--port', String(port), '--host', '127.0.0.1'], {
    // Its own session, as exobar's runners are (runner-process.ts spawns them detached):
    // Linux's autogroup scheduler gives every session an equal CPU share, so a server left
    // in the bench's session decoded 2.5-3x faster on this shared machine than the same
    // server in its own (60-73 vs 23-26 tokens/s, load 21): the ratio measured sessions.
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HF_HUB_OFFLINE: '1' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const baseURL = `http://127.0.0.1:${port}/v1`;
  try {
    await eventually(
      async () => {
        if (child.exitCode != null) throw new Error(`mlx_lm.server exited (${child.exitCode}):\n${stderr}`);
        return fetch(`${baseURL}/models`).then((r) => r.ok, () => false);
      },
      START_TIMEOUT_MS,
      'mlx_lm.server to answer',
    );
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  log(`mlx_lm.server on port ${port}`);
  return { name: 'mlx_lm', baseURL, model: 'default_model', stop: () => stopChild(child) };
}

/**
 * `node bin/exobar.js serve --port 0` with a scratch data directory (its settings name the
 * MLX venv's Python), then `POST /api/instances?wait=ready` for the tiny model.
 */
export async function startExobarServe(python: string, modelDir: string, log: (line: string) => void): Promise<EngineServer> {
  const root = mkdtempSync(join(tmpdir(), 'exobar-bench-engine-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ mlxPython: python }));
  const env = { ...process.env, HF_HUB_CACHE: hubCacheWith(modelDir, root, TINY_REPO), EXO_HOME: join(root, 'exo'), EXOBAR_LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, [join(packageRoot(), 'bin', 'exobar.js'), 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: packageRoot(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const stop = async () => {
    await stopChild(child);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^exobar listening on (\S+)/.exec(line);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exobar serve exited (${code}) before listening:\n${stderr}`)));
    });
    const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const model = `mlx/${TINY_REPO}`;
    // The model scan runs at start: the launch is retried until the model is found.
    await eventually(
      async () => {
        const response = await fetch(`${origin}/api/instances?wait=ready&timeout_ms=${START_TIMEOUT_MS}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ model, acknowledgeMemory: true }),
        });
        if (response.ok) return true;
        const body = await response.text();
        if (response.status === 404) return false;
        throw new Error(`launching ${model} failed: ${response.status} ${body}`);
      },
      START_TIMEOUT_MS,
      `exobar serve to launch ${model}`,
    );
    log(`exobar serve at ${origin}, ${model} ready`);
    return { name: 'exobar', baseURL: `${origin}/v1`, model, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
