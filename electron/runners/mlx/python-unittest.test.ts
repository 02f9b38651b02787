/**
 * Runs the MLX runner's Python unit tests (electron/runners/mlx/tests, stdlib unittest)
 * as part of `npm test`: the step loop's semantics, the mlx engine's glue to mlx-lm
 * against a fast fake, the runner as a real child process, and the engine on real MLX
 * with tiny models (test_real_mlx_*.py).
 *
 * The interpreter is `$EXOBAR_MLX_PYTHON` when set (CI sets it to the venv that
 * "Set up MLX runtime" makes, with mlx[cpu] and mlx-lm), else python3; without MLX the
 * real-MLX tests skip with one loud line, and under CI=true they fail instead.
 */
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const RUNNER_DIR = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.EXOBAR_MLX_PYTHON || 'python3';

function hasPython(): boolean {
  const probe = spawnSync(PYTHON, ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'], {
    timeout: 20_000,
  });
  return probe.status === 0;
}

describe('mlx runner: Python unit tests', () => {
  // Under CI a missing interpreter is a failure, not a skip.
  it.skipIf(!hasPython() && process.env.CI !== 'true')('pass under python3 -m unittest', () => {
    const result = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: RUNNER_DIR,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', MLX_METAL_FAST_SYNCH: undefined, EXO_FAST_SYNCH: undefined },
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.error, output).toBeUndefined();
    expect(result.status, output).toBe(0);
    // unittest prints "Ran N tests" then OK (possibly with skips): make sure tests ran.
    expect(output).toMatch(/Ran [1-9]\d* tests?/);
    expect(output).toMatch(/\nOK\b/);
    // One line in the vitest output with what ran, for the CI log.
    console.log(`mlx runner unit tests (${PYTHON}): ${output.match(/Ran \d+ tests? in [\d.]+s/)?.[0]} ${output.match(/\nOK.*/)?.[0]?.trim()}`);
  }, 320_000);
});
