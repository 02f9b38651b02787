/**
 * How the node starts a sim runner from source: Node with tsx's loader, resolved to an
 * absolute path so the node works from any working directory.
 */
import { fileURLToPath } from 'node:url';
import type { SpawnSpec } from '../supervisor/spawn-spec';

const SIM_RUNNER_MAIN = fileURLToPath(new URL('../../runners/sim/main.ts', import.meta.url));

export function simSpawnSpec(model: string, timeScale: number, gpuDir: string): SpawnSpec {
  return {
    command: process.execPath,
    args: ['--import', import.meta.resolve('tsx'), SIM_RUNNER_MAIN, '--model', model, '--time-scale', String(timeScale)],
    env: { EXOBAR_SIM_GPU_DIR: gpuDir },
  };
}
