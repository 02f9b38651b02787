/**
 * Runs the MLX runner's Python unit tests (electron/runners/mlx/tests, stdlib unittest)
 * as part of `npm test`: the step loop's semantics, the mlx engine's glue to mlx-lm
 * against a fake, and the runner as a real child process.
 */
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const RUNNER_DIR = dirname(fileURLToPath(import.meta.url));

function hasPython(): boolean {
  const probe = spawnSync('python3', ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'], {
    timeout: 20_000,
  });
  return probe.status === 0;
}

describe('mlx runner: Python unit tests', () => {
  it.skipIf(!hasPython())('pass under python3 -m unittest', () => {
    const result = spawnSync('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: RUNNER_DIR,
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', MLX_METAL_FAST_SYNCH: undefined, EXO_FAST_SYNCH: undefined },
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.error, output).toBeUndefined();
    expect(result.status, output).toBe(0);
    // unittest prints "Ran N tests" then OK (possibly with skips): make sure tests ran.
    expect(output).toMatch(/Ran [1-9]\d* tests?/);
    expect(output).toMatch(/\nOK\b/);
  }, 200_000);
});
