import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findPackageRoot, packageRoot, packageVersion } from './package-root';

const repo = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'exobar-package-root-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('packageRoot', () => {
  it('is the repository from the source tree, with its version', () => {
    expect(packageRoot()).toBe(repo);
    expect(packageVersion()).toBe((JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('skips package.json files of other packages on the way up, and takes file URLs', () => {
    const app = join(scratch, 'app');
    mkdirSync(join(app, 'node_modules', 'dep', 'lib'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'exobar', version: '9.9.9' }));
    writeFileSync(join(app, 'node_modules', 'dep', 'package.json'), JSON.stringify({ name: 'dep' }));
    expect(findPackageRoot(join(app, 'node_modules', 'dep', 'lib'))).toBe(app);
    expect(findPackageRoot(`file://${join(app, 'node_modules', 'dep', 'lib')}`)).toBe(app);
  });

  it('throws when no exobar package.json is above', () => {
    const lonely = join(scratch, 'lonely');
    mkdirSync(lonely);
    expect(() => findPackageRoot(lonely)).toThrow(/no package.json named "exobar"/);
  });

  it('is found from the built bundle too (out/node), where paths relative to the module would be wrong', () => {
    const version = execFileSync(process.execPath, [join(repo, 'bin', 'exobar.js'), '--version'], { encoding: 'utf8' }).trim();
    expect(version).toBe(packageVersion());
  });
});
