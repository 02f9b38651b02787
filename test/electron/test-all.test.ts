/**
 * `npm test` (scripts/test-all.js) runs every stage whatever the previous one did, says
 * of each whether it passed and how long it took, and exits non-zero if any failed: one
 * failing stage must not hide the others (the browser tests after the unit tests).
 * Driven with an `npm` stand-in on PATH whose "lint" fails. A failed vitest stage's
 * tests are named after the summary, from the JSON report the stage writes, so that the
 * tail of a long run says what failed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '..', '..', 'scripts', 'test-all.js');

describe('npm test', () => {
  it('runs every stage after a failing one, reports each, and exits 1', () => {
    const bin = mkdtempSync(join(tmpdir(), 'exobar-test-all-'));
    try {
      // `npm run --silent <stage>`: the stage is the third argument.
      writeFileSync(join(bin, 'npm'), '#!/bin/sh\n[ "$3" = lint ] && exit 1\nexit 0\n');
      chmodSync(join(bin, 'npm'), 0o755);
      const run = spawnSync(process.execPath, [script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
      expect(run.status).toBe(1);
      const summary = run.stdout.slice(run.stdout.indexOf('=== summary'));
      expect(summary).toMatch(/passed {2}typecheck +\d/);
      expect(summary).toMatch(/FAILED {2}lint +[\d.]+ s {2}\(exit 1\)/);
      expect(summary).toMatch(/passed {2}test:unit/);
      expect(summary).toMatch(/passed {2}test:e2e/);
      expect(summary).toContain('1 of 4 stages failed: lint');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('names the failed tests of a failed vitest stage, with their errors, after the summary', () => {
    const bin = mkdtempSync(join(tmpdir(), 'exobar-test-all-'));
    try {
      const report = {
        testResults: [
          {
            name: join(process.cwd(), 'electron/core/a.test.ts'),
            status: 'failed',
            message: '',
            assertionResults: [
              { fullName: 'queue keeps order', status: 'failed', failureMessages: ['AssertionError: expected 1 to be 2\n    at a.test.ts:3:4'] },
              { fullName: 'queue starts empty', status: 'passed', failureMessages: [] },
            ],
          },
          { name: join(process.cwd(), 'electron/core/b.test.ts'), status: 'failed', message: 'Error: Cannot find module ./gone', assertionResults: [] },
        ],
      };
      writeFileSync(join(bin, 'report.json'), JSON.stringify(report));
      // test:unit copies the report to where --outputFile.json= asks and fails; the other stages pass.
      const standIn = [
        '#!/bin/sh',
        '[ "$3" = test:unit ] || exit 0',
        'for arg in "$@"; do case "$arg" in --outputFile.json=*) cp "' + join(bin, 'report.json') + '" "${arg#--outputFile.json=}";; esac; done',
        'exit 1',
      ].join('\n');
      writeFileSync(join(bin, 'npm'), `${standIn}\n`);
      chmodSync(join(bin, 'npm'), 0o755);
      const run = spawnSync(process.execPath, [script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, encoding: 'utf8' });
      expect(run.status).toBe(1);
      const failures = run.stdout.slice(run.stdout.indexOf('test:unit failed:'));
      expect(failures).toContain('electron/core/a.test.ts > queue keeps order');
      expect(failures).toContain('AssertionError: expected 1 to be 2');
      expect(failures).not.toContain('at a.test.ts:3:4');
      expect(failures).not.toContain('queue starts empty');
      expect(failures).toContain('electron/core/b.test.ts (the file failed)');
      expect(failures).toContain('Cannot find module ./gone');
      expect(run.stdout).not.toContain('test:e2e failed:');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
