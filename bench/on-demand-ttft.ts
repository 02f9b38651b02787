/**
 * Models on demand: what a cold model costs its first request. Through the real local
 * API with the official `openai` client, on a fresh core with no instance:
 *
 *   cold_ttft_s:     a request for the sim 1B with nothing running: the load on request
 *                    plus its first token, at the client
 *   warm_ttft_s:     the next request for the same model, now resident
 *
 * Each trial unloads the instance again (as an idle unload would), so every cold request
 * starts a runner. With EXOBAR_MLX_PYTHON set, the same on real MLX with a tiny
 * random-weight model (CPU): `cold_ttft_s_mlx` / `warm_ttft_s_mlx`, labelled.
 * Sim figures are calibrated seconds (measured / time scale); MLX figures are wall seconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pino from 'pino';
import { defaultSettings } from '../shared/api';
import type { CatalogModel } from '../shared/catalog';
import { localInstances } from '../shared/instance-state';
import { startCore, type RunningCore } from '../electron/core/start-core';
import { streamWithClient } from './api-stall-scenario';
import { tinyModels, MLX_TINY_LLAMA } from './fair-sharing';
import { median } from '../test/support/median';
import { SMALL_MODEL } from './stall-scenario';

export interface OnDemandTtftResult {
  cold_ttft_s: number;
  warm_ttft_s: number;
  /** Cold over warm: what the load adds, as a ratio. */
  cold_over_warm: number;
  cold_trials_s: number[];
  warm_trials_s: number[];
  /** The node's `load` part of the cold requests' TTFT, median seconds. */
  load_s_median: number;
  model: string;
  source: string;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Streams one short request; the client-side TTFT in ms and the completion id. */
async function firstToken(client: OpenAI, model: string, salt: string): Promise<{ ms: number; id: string }> {
  const { ttftMs, id } = await streamWithClient(client, model, [{ role: 'user', content: `hello ${salt}` }]);
  return { ms: ttftMs, id };
}

async function measure(
  core: RunningCore,
  model: string,
  trials: number,
  scale: number,
  source: string,
  progress: (line: string) => void,
): Promise<OnDemandTtftResult> {
  const client = new OpenAI({ baseURL: `${core.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 300_000 });
  const cold: number[] = [];
  const warm: number[] = [];
  const load: number[] = [];
  for (let n = 0; n < trials; n++) {
    if (localInstances(core.node.snapshot()).some((i) => i.model === model)) throw new Error(`${model} is still resident before a cold trial`);
    const c = await firstToken(client, model, `cold-${n}-${Date.now()}`);
    const instance = localInstances(core.node.snapshot()).find((i) => i.model === model);
    const sample = instance?.ttft.samples.find((s) => s.requestId === c.id);
    if (!instance || sample?.loadMs === undefined) throw new Error('the cold request has no load part in its TTFT');
    const w = await firstToken(client, model, `warm-${n}-${Date.now()}`);
    cold.push(round(c.ms / 1000 / scale));
    warm.push(round(w.ms / 1000 / scale));
    load.push(round(sample.loadMs / 1000 / scale));
    progress(`on demand ${source} trial ${n + 1}/${trials}: cold TTFT ${cold.at(-1)} s (load ${load.at(-1)} s), warm ${warm.at(-1)} s`);
    await core.node.unloadInstance(instance.id, 'operator');
  }
  const coldS = round(median(cold));
  const warmS = round(median(warm));
  return {
    cold_ttft_s: coldS,
    warm_ttft_s: warmS,
    cold_over_warm: round(coldS / warmS),
    cold_trials_s: cold,
    warm_trials_s: warm,
    load_s_median: round(median(load)),
    model,
    source,
  };
}

async function withCore<T>(timeScale: number, mlxPython: string | null, run: (core: RunningCore) => Promise<T>, extraModels: CatalogModel[] = []): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-bench-on-demand-'));
  const settings = { ...defaultSettings(), mlxPython };
  const core = await startCore({
    dataDir,
    port: 0,
    simTimeScale: timeScale,
    settings,
    rendererDir: null,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    extraModels: () => extraModels,
  });
  try {
    return await run(core);
  } finally {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The on-demand rows: the sim 1B always, a tiny real MLX model when EXOBAR_MLX_PYTHON is set. */
export async function measureOnDemandTtft(
  timeScale: number,
  trials: number,
  progress: (line: string) => void,
): Promise<{ json: Record<string, unknown>; rows: string[][] }> {
  const sim = await withCore(timeScale, null, (core) => measure(core, SMALL_MODEL, trials, timeScale, 'sim (simulated)', progress));
  const json: Record<string, unknown> = { cold_ttft_s: sim.cold_ttft_s, warm_ttft_s: sim.warm_ttft_s, on_demand: sim };
  const rows = [
    ['cold_ttft_s (sim 1B: load + first token)', `${sim.cold_ttft_s.toFixed(3)} s (load ${sim.load_s_median.toFixed(3)} s)`, 'load + warm TTFT'],
    ['warm_ttft_s (sim 1B, resident)', `${sim.warm_ttft_s.toFixed(3)} s`, ''],
  ];
  const python = process.env.EXOBAR_MLX_PYTHON;
  if (!python) {
    json.on_demand_mlx_skipped = 'EXOBAR_MLX_PYTHON is not set: no real-MLX figures';
    return { json, rows };
  }
  // The tiny model is the core's beside the MLX models its scan finds (it is not among them).
  const tiny = tinyModels(python).filter((m) => m.id === MLX_TINY_LLAMA);
  const mlx = await withCore(
    1,
    python,
    async (core) => {
      await core.mlx.refresh();
      if (!core.mlx.snapshot().available) throw new Error(`the MLX runtime at ${python} is not usable: ${core.mlx.snapshot().reason}`);
      return measure(core, MLX_TINY_LLAMA, trials, 1, 'real MLX (CPU), tiny llama, random weights', progress);
    },
    tiny,
  );
  Object.assign(json, { cold_ttft_s_mlx: mlx.cold_ttft_s, warm_ttft_s_mlx: mlx.warm_ttft_s, on_demand_mlx: mlx });
  rows.push(
    ['cold_ttft_s_mlx (real MLX CPU, tiny llama)', `${mlx.cold_ttft_s.toFixed(3)} s (load ${mlx.load_s_median.toFixed(3)} s)`, 'wall seconds'],
    ['warm_ttft_s_mlx (real MLX CPU, tiny llama)', `${mlx.warm_ttft_s.toFixed(3)} s`, 'wall seconds'],
  );
  return { json, rows };
}
