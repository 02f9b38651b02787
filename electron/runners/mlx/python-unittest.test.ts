/**
 * Runs the MLX runner's Python unit tests (electron/runners/mlx/tests, stdlib unittest)
 * as part of `npm test`: the step loop's semantics, the mlx engine's glue to mlx-lm
 * against a fast fake, the runner as a real child process, and the engine on real MLX
 * with tiny models (test_real_mlx_*.py).
 *
 * Each Python case is its own vitest case: tests/report_cases.py lists the cases when
 * this file is collected, then runs them all once (one interpreter, as
 * `python3 -m unittest discover` would) and writes one result per case; each vitest case
 * passes, fails with the Python traceback, or skips with unittest's reason.
 *
 * The interpreter is `$EXOBAR_MLX_PYTHON` when set (CI sets it to the venv that
 * "Set up MLX runtime" makes, with mlx[cpu] and mlx-lm), else python3; without MLX the
 * real-MLX tests skip with one loud line, and under CI=true they fail instead. Under
 * CI=true a missing interpreter fails this file too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const RUNNER_DIR = dirname(fileURLToPath(import.meta.url));
const PYTHON = process.env.EXOBAR_MLX_PYTHON || 'python3';
const ENV = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', MLX_METAL_FAST_SYNCH: undefined, EXO_FAST_SYNCH: undefined };
const CI = process.env.CI === 'true';

const Listed = z.object({ id: z.string() });
const CaseResult = z.object({ id: z.string(), outcome: z.enum(['pass', 'fail', 'skip']), message: z.string(), seconds: z.number() });
type CaseResult = z.infer<typeof CaseResult>;

function hasPython(): boolean {
  const probe = spawnSync(PYTHON, ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)'], {
    timeout: 20_000,
  });
  return probe.status === 0;
}

/** The JSON lines report_cases.py wrote to `file`, each checked against `schema`. */
function readLines<T>(file: string, schema: z.ZodType<T>): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => schema.parse(JSON.parse(line)));
}

/** Runs report_cases.py `command` into a scratch file; its lines and what the interpreter printed. */
function reportCases<T>(command: 'list' | 'run', schema: z.ZodType<T>, timeout: number): { lines: T[]; status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-python-tests-'));
  try {
    const file = join(dir, `${command}.jsonl`);
    const run = spawnSync(PYTHON, ['tests/report_cases.py', command, file], { cwd: RUNNER_DIR, encoding: 'utf8', timeout, env: ENV });
    const output = [run.error ? `${PYTHON}: ${run.error.message}` : '', run.stdout ?? '', run.stderr ?? ''].filter(Boolean).join('\n');
    return { lines: readLines(file, schema), status: run.status, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Under CI a missing interpreter is a failure, not a skip: the listing below fails the file.
const runnable = hasPython() || CI;
const CASES: string[] = [];
if (runnable) {
  const listed = reportCases('list', Listed, 120_000);
  if (listed.status !== 0) throw new Error(`listing the Python tests with ${PYTHON} failed:\n${listed.output}`);
  CASES.push(...listed.lines.map((c) => c.id));
}

describe.skipIf(!runnable)('mlx runner: Python unit tests', () => {
  const results = new Map<string, CaseResult>();
  /** Results with no listed case: a class or module fixture (setUpClass, setUpModule) that failed. */
  const fixtureErrors: CaseResult[] = [];
  let run: { status: number | null; output: string } = { status: null, output: '' };

  beforeAll(() => {
    // A bound for a hung interpreter, not a speed target: on a loaded 2-core machine the real-MLX
    // cases alone take minutes.
    const { lines, ...rest } = reportCases('run', CaseResult, 1_200_000);
    run = rest;
    const listed = new Set(CASES);
    for (const result of lines) {
      if (listed.has(result.id)) results.set(result.id, result);
      else fixtureErrors.push(result);
    }
    // The loud line of a machine without MLX, and one line with what ran, for the CI log.
    for (const line of run.output.match(/^\*\*\* SKIPPING.*$/gm) ?? []) console.log(line);
    console.log(`mlx runner unit tests (${PYTHON}): ${run.output.match(/Ran \d+ tests? in [\d.]+s/)?.[0]} ${run.output.match(/\n(OK|FAILED).*/)?.[0]?.trim()}`);
  }, 1_220_000);

  it('finds the Python tests, and the run ends with a result for each', () => {
    expect(CASES.length).toBeGreaterThan(0);
    // 0 when every case passed or skipped, 1 when one failed (its own case says which); anything else is a crash or a timeout.
    expect([0, 1], `the Python run ended with status ${run.status}:\n${run.output.slice(-4000)}`).toContain(run.status);
  });

  it('no class or module fixture failed', () => {
    expect(fixtureErrors.map((e) => `${e.id}\n${e.message}`)).toEqual([]);
  });

  for (const id of CASES) {
    it(id.replace(/^tests\./, ''), (ctx) => {
      const result = results.get(id);
      if (!result) {
        // A fixture that failed explains it; else the end of what the interpreter printed (a crash, a timeout).
        const why = fixtureErrors.length > 0 ? fixtureErrors.map((e) => `${e.id}\n${e.message}`).join('\n') : run.output.slice(-4000);
        expect.unreachable(`${id} did not run:\n${why}`);
      }
      if (result.outcome === 'skip') ctx.skip(result.message);
      if (result.outcome === 'fail') expect.unreachable(`${id} failed:\n${result.message}`);
    });
  }
});
