/**
 * `npm test` (scripts/test-all.js) runs every stage whatever the previous one did, says
 * of each whether it passed and how long it took, and exits non-zero if any failed: one
 * failing stage must not hide the others (the browser tests after the unit tests).
 * Driven with an `npm` stand-in on PATH whose "lint" fails.
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
});
