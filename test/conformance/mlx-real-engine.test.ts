/**
 * The conformance suite against the MLX runner's real `mlx` engine: real mlx-lm
 * (BatchGenerator, real cache classes) on MLX's CPU backend, with the tiny pure
 * state-space model from electron/runners/mlx/tools/tiny_models.py (its prefill grows
 * linearly with the prompt, so the suite's 14k-token prompts take seconds). CPU timings
 * are not the Mac's: what is checked is the order of events and that nothing stalls.
 *
 * The interpreter is `$EXOBAR_MLX_PYTHON` (CI sets it to the venv "Set up MLX runtime"
 * makes). Without it the suite is skipped with one loud line; under CI=true it fails.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mlxRunnerCommand } from '../../electron/core/mlx/mlx-runner-command';
import { DEFAULT_PREFILL_CHUNK_MS } from '../../shared/runner-protocol';
import { REPO_ROOT } from '../support/sim-runner-spec';
import { describePrefillPacingConformance } from '../support/conformance/pacing-conformance';
import type { RunnerConformanceProfile } from '../support/conformance/conformance-runner';
import { describeRunnerConformance } from '../support/conformance/runner-conformance';

const LONG_PROMPT_TOKENS = 14_000;
/** The runner's cap for maxTokens null: the random-weight model never ends on its own. */
const DEFAULT_MAX_TOKENS = 24;
const TOOLS = join(REPO_ROOT, 'electron', 'runners', 'mlx', 'tools', 'tiny_models.py');

/** The tiny model's directory (made or reused), or why real MLX cannot run here. */
function prepare(): { python: string; model: string } | { missing: string } {
  const python = process.env.EXOBAR_MLX_PYTHON;
  if (!python) return { missing: 'EXOBAR_MLX_PYTHON is not set' };
  try {
    const out = execFileSync(python, [TOOLS, '--family', 'mamba2'], { encoding: 'utf8', timeout: 120_000, cwd: REPO_ROOT });
    const model = out.trim().split('\t').at(-1)!;
    return { python, model };
  } catch (error) {
    return { missing: `${python} cannot make the tiny model: ${(error as Error).message.split('\n')[0]}` };
  }
}

const ready = prepare();

if ('missing' in ready) {
  if (process.env.CI === 'true') {
    describe('runner conformance: mlx runner (real mlx engine)', () => {
      it('runs in CI', () => {
        expect.fail(`CI must run the real-MLX conformance suite: ${ready.missing}`);
      });
    });
  } else {
    console.warn(`*** SKIPPING the real-MLX conformance suite: ${ready.missing} (see electron/runners/mlx/requirements-cpu.txt)`);
    describe.skip('runner conformance: mlx runner (real mlx engine) — needs EXOBAR_MLX_PYTHON', () => {
      it('skipped', () => {});
    });
  }
} else {
  const profile: RunnerConformanceProfile = {
    spawn: (extraEnv, schedule = 'exo') => ({
      ...mlxRunnerCommand({
        python: ready.python,
        model: ready.model,
        engine: 'mlx',
        engineOptions: { schedule, prefillChunkMs: DEFAULT_PREFILL_CHUNK_MS, promptCacheBytes: 0 },
        defaultMaxTokens: DEFAULT_MAX_TOKENS,
        fastSynch: null,
        extraEnv,
      }),
      cwd: REPO_ROOT,
    }),
    engine: 'mlx',
    model: ready.model,
    longPromptTokens: LONG_PROMPT_TOKENS,
    stopSequences: 'supported',
    // A 4096-token chunk takes about 1 s on a quiet CPU and several on a busy one.
    longPrefillMs: 20_000,
    startTimeoutMs: 30_000,
    lifecycleTimeoutMs: 60_000,
    generationTimeoutMs: 30_000,
    hangSilenceMs: 2000,
    naturalEnd: { length: DEFAULT_MAX_TOKENS },
  };
  describeRunnerConformance('mlx runner (real mlx engine, CPU, tiny mamba2)', profile);
  // On real MLX "no token changed" is a real claim: other chunk sizes are other kernels.
  describePrefillPacingConformance('mlx runner (real mlx engine, CPU, tiny mamba2)', profile);
}
