/**
 * How the node starts a sim runner: the built bundle, out/main/sim-runner.cjs, as the
 * app ships it (electron/core/runner-entry.ts says where it is).
 */
import { runnerEngineArgs, type RunnerEngineOptions } from '../../../shared/runner-protocol';
import { resolveSimRunnerCommand } from '../runner-entry';
import type { SpawnSpec } from '../supervisor/spawn-spec';

export function simSpawnSpec(model: string, timeScale: number, gpuDir: string, engine: RunnerEngineOptions): SpawnSpec {
  const entry = resolveSimRunnerCommand();
  return {
    command: entry.command,
    args: [...entry.args, '--model', model, '--time-scale', String(timeScale), ...runnerEngineArgs(engine)],
    env: { ...entry.env, EXOBAR_SIM_GPU_DIR: gpuDir },
  };
}
