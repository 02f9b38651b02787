/**
 * When `exobar serve`, the bench and the tests rebuild out/ (scripts/build-node.js):
 * when an output is missing, or a source changed after the last build started; never
 * for a test file.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_BUILD_OUTPUTS, nodeBuildNeed } from '../../scripts/build-node.js';

const scratch = mkdtempSync(join(tmpdir(), 'exobar-build-node-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const T0 = Date.parse('2026-01-01T00:00:00Z');

function write(project: string, file: string, mtimeMs: number): void {
  mkdirSync(dirname(join(project, file)), { recursive: true });
  writeFileSync(join(project, file), '');
  utimesSync(join(project, file), mtimeMs / 1000, mtimeMs / 1000);
}

/** A project whose sources date from T0 and whose build started at T0 + 1 s. */
function builtProject(name: string): string {
  const project = join(scratch, name);
  for (const file of ['electron/cli/cli.ts', 'electron/core/node/node.ts', 'shared/snapshot.ts', 'bench/run.ts', 'package.json']) write(project, file, T0);
  for (const file of NODE_BUILD_OUTPUTS) write(project, file, T0 + 2000);
  writeFileSync(join(project, 'out/node/build-stamp.json'), JSON.stringify({ startedAt: T0 + 1000, builtAt: T0 + 2000 }));
  return project;
}

describe('nodeBuildNeed', () => {
  it('is null when every output is there and no source changed since the build started', () => {
    expect(nodeBuildNeed(builtProject('fresh'))).toBeNull();
  });

  it('says "missing" without an output or without the stamp', () => {
    const noRunner = builtProject('no-runner');
    rmSync(join(noRunner, 'out/main/sim-runner.cjs'));
    expect(nodeBuildNeed(noRunner)).toBe('missing');
    const noStamp = builtProject('no-stamp');
    rmSync(join(noStamp, 'out/node/build-stamp.json'));
    expect(nodeBuildNeed(noStamp)).toBe('missing');
  });

  it('says "stale" when a source of the build changed after the build started', () => {
    for (const file of ['electron/core/supervisor/new-file.ts', 'shared/snapshot.ts', 'bench/run.ts', 'package.json']) {
      const project = builtProject(`stale-${file.replace(/\W/g, '-')}`);
      write(project, file, T0 + 1500);
      expect(nodeBuildNeed(project), file).toBe('stale');
    }
  });

  it('ignores tests, the Electron main process and the Python runner (not in this build)', () => {
    const project = builtProject('ignored');
    for (const file of ['electron/core/node.test.ts', 'electron/main/index.ts', 'electron/runners/mlx/types.ts']) write(project, file, T0 + 5000);
    expect(nodeBuildNeed(project)).toBeNull();
  });
});
