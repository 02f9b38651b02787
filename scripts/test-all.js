#!/usr/bin/env node
// `npm test`: runs every stage of the suite (the package.json scripts named below),
// each whatever the previous one did, so that one failing unit test cannot hide the
// browser tests; then prints one line per stage (passed or failed, and its time) and
// exits non-zero if any stage failed. The stages' commands stay in package.json: this
// file only sequences them and reports, naming the failed tests of the vitest stages.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { failureLines } from './test-failures.js';

const STAGES = ['typecheck', 'lint', 'test:unit', 'test:e2e'];
// The vitest stages also write a JSON report, so the summary can name the failed tests.
const VITEST_STAGES = new Set(['test:unit', 'test:e2e']);
const reports = mkdtempSync(join(tmpdir(), 'exobar-test-reports-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Seconds with one decimal, or minutes and seconds past a minute. */
function duration(ms) {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

const results = [];
for (const stage of STAGES) {
  const started = performance.now();
  process.stdout.write(`\n=== npm run ${stage}\n`);
  const report = VITEST_STAGES.has(stage) ? join(reports, `${stage.replace(':', '-')}.json`) : undefined;
  const extra = report ? ['--', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`] : [];
  const run = spawnSync(npm, ['run', '--silent', stage, ...extra], { stdio: 'inherit' });
  // A stage killed by a signal (or that could not start) failed as surely as one that exited 1.
  const passed = run.status === 0;
  const how = run.error ? `could not start: ${run.error.message}` : run.signal ? `killed by ${run.signal}` : `exit ${run.status}`;
  results.push({ stage, passed, how, report, ms: performance.now() - started });
}

process.stdout.write('\n=== summary\n');
for (const { stage, passed, how, ms } of results) {
  process.stdout.write(`${passed ? 'passed' : 'FAILED'}  ${stage.padEnd(10)} ${duration(ms).padStart(12)}${passed ? '' : `  (${how})`}\n`);
}
for (const { stage, passed, report } of results) {
  if (passed || !report) continue;
  process.stdout.write(`\n${stage} failed:\n${failureLines(report).join('\n')}\n`);
}
rmSync(reports, { recursive: true, force: true });
const failed = results.filter((r) => !r.passed).map((r) => r.stage);
process.stdout.write(failed.length === 0 ? 'every stage passed\n' : `${failed.length} of ${results.length} stages failed: ${failed.join(', ')}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
