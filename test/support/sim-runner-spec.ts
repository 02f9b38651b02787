/**
 * Spawn specs for the sim runner, for tests and scripts: the built bundle the app ships
 * (out/main/sim-runner.cjs), which the test setup builds once (test/build-node-setup.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIM_RUNNER_BUILT_PATH } from '../../electron/core/runner-entry';
import type { RunnerSpawnSpec } from './runner-under-test';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The sim runner as it ships; what the core starts too (electron/core/runner-entry.ts). */
export const SIM_RUNNER_JS = join(REPO_ROOT, SIM_RUNNER_BUILT_PATH);

const createdDirs: string[] = [];
process.once('exit', () => {
  for (const dir of createdDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory (removed when this process exits): one simulated GPU that only the runners given it share. */
export function makeSimGpuDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-sim-gpu-test-'));
  createdDirs.push(dir);
  return dir;
}

export interface SimRunnerSpecOptions {
  model: string;
  timeScale: number;
  /** Runners given the same directory share one simulated GPU; default: a fresh one. */
  gpuDir?: string;
  /** Added on top; undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** More runner flags (`--schedule exo`, `--prompt-cache-bytes N`). */
  args?: string[];
}

/**
 * The spawn spec of a sim runner. The inherited fast-synch variables are removed so a
 * test sees only what it sets.
 */
export function simRunnerSpec(options: SimRunnerSpecOptions): RunnerSpawnSpec {
  return {
    command: process.execPath,
    args: [SIM_RUNNER_JS, '--model', options.model, '--time-scale', String(options.timeScale), ...(options.args ?? [])],
    env: {
      ...process.env,
      MLX_METAL_FAST_SYNCH: undefined,
      EXO_FAST_SYNCH: undefined,
      EXOBAR_SIM_GPU_DIR: options.gpuDir ?? makeSimGpuDir(),
      ...options.env,
    },
    cwd: REPO_ROOT,
  };
}
