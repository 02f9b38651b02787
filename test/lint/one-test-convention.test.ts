/**
 * One of each test helper, imported from its own file: Electron is mocked once, in the
 * node project's setup file, so no test file mocks it again with a fake of its own (two
 * fakes drift, and a test that passes against one says nothing about the other); the
 * poll helper, the free port and the test side's `sleep` are defined once and re-exported
 * by no other module, so a second copy has nowhere to hide behind a familiar import. The
 * product keeps timers of its own (it never imports test/support/). The fake exo is
 * reached through its one entry module, so no test builds its exo from a corner the
 * others skip.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT, sourceFiles } from '../support/source-files';

const FILES = ['electron', 'shared', 'renderer', 'bench', 'test', 'scripts']
  .flatMap((dir) => sourceFiles(join(ROOT, dir), (path) => /\.(ts|tsx|mts|mjs)$/.test(path)))
  .map((p) => relative(ROOT, p));
/** Files whose code (not a comment or a string in this file) matches `pattern`. */
const matching = (pattern: RegExp) =>
  FILES.filter((file) => file !== 'test/lint/one-test-convention.test.ts' && pattern.test(readFileSync(join(ROOT, file), 'utf8')));

describe('one test convention', () => {
  it('mocks electron in one place, the setup file of the node project', () => {
    expect(matching(/vi\.(do)?[mM]ock\(\s*['"]electron['"]/)).toEqual(['test/support/electron/mock-electron.setup.ts']);
  });

  it.each([
    ['eventually', 'test/support/eventually.ts'],
    ['freePort', 'test/support/free-port.ts'],
  ])('defines %s once, in %s, and no module re-exports it', (name, home) => {
    expect(matching(new RegExp(`(function|const|let)\\s+${name}\\b`))).toEqual([home]);
    expect(matching(new RegExp(`export\\s*\\{[^}]*\\b${name}\\b[^}]*\\}\\s*from`))).toEqual([]);
  });

  it('defines sleep once on the test side, in test/support/eventually.ts, and no test, bench or support file writes its own timer promise', () => {
    const testSide = (file: string) => /^(test|bench)\//.test(file) || /\.test\.tsx?$/.test(file);
    expect(matching(/(function|const|let)\s+sleep\b/).filter(testSide)).toEqual(['test/support/eventually.ts']);
    expect(matching(/export\s*\{[^}]*\bsleep\b[^}]*\}\s*from/)).toEqual([]);
    const timerPromise = /new Promise(<[^>]*>)?\(\(?(\w+)\)?\s*=>\s*setTimeout\(\2\s*,/;
    expect(matching(timerPromise).filter(testSide)).toEqual(['test/support/eventually.ts']);
    // The rule reads the tests beside the product's code too (a rule nobody is subject to proves nothing).
    expect(FILES.filter(testSide)).toEqual(expect.arrayContaining(['electron/core/exo/attach/exo-client-cadence.test.ts', 'renderer/src/bridge/http-bridge.test.ts']));
  });

  it("lets only the fake exo's own files import its modules: the tests, the bench and the `exo` command use its entry", () => {
    const FAKE_EXO = 'test/support/fake-exo/';
    const internal = /['"`][^'"`\n]*\bfake-exo\/[^'"`\n]+['"`]/;
    expect(matching(internal).filter((file) => !file.startsWith(FAKE_EXO))).toEqual([]);
    // The entry really is the way in (a rule nobody is subject to proves nothing).
    const viaEntry = matching(/from\s+'[^'\n]*\/fake-exo'/);
    expect(viaEntry).toEqual(expect.arrayContaining(['bench/exo-proxy.ts', 'test/support/fake-exo-exe/main.ts', 'test/e2e/exo.e2e.test.ts']));
  });
});
