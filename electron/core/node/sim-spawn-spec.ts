/**
 * How the node starts a sim runner: the built bundle, out/main/sim-runner.cjs, as the
 * app ships it (electron/core/runner-entry.ts says where it is), with the setting's
 * timing profile when one is chosen (`runner.simProfile`: `--profile`).
 */
import { runnerEngineArgs, type RunnerEngineOptions, type SimProfileName } from '../../../shared/runner-protocol';
import { resolveSimRunnerCommand } from '../runner-entry';
import type { SpawnSpec } from '../supervisor/spawn-spec';

export function simSpawnSpec(
  model: string,
  timeScale: number,
  gpuDir: string,
  engine: RunnerEngineOptions,
  profile: SimProfileName | null = null,
): SpawnSpec {
  const entry = resolveSimRunnerCommand();
  return {
    command: entry.command,
    args: [
      ...entry.args,
      '--model', model,
      '--time-scale', String(timeScale),
      ...runnerEngineArgs(engine),
      ...(profile === null ? [] : ['--profile', profile]),
    ],
    env: { ...entry.env, EXOBAR_SIM_GPU_DIR: gpuDir },
  };
}
