import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sourceFiles } from './source-files';

describe('sourceFiles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'source-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const file of ['a.ts', 'b.md', 'deep/c.ts', 'node_modules/d.ts', 'out/e.ts', '.cache/f.ts', 'deep/out/g.ts']) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), '');
  }

  it('keeps the files its filter accepts, and never enters node_modules, out or a dot-folder', () => {
    const found = sourceFiles(dir, (path) => path.endsWith('.ts')).map((path) => relative(dir, path));
    expect(found.sort()).toEqual(['a.ts', 'deep/c.ts']);
  });

  it('gives the filter absolute paths, and finds nothing in a folder that does not exist', () => {
    const seen: string[] = [];
    sourceFiles(dir, (path) => (seen.push(path), false));
    expect(seen.sort()).toEqual([join(dir, 'a.ts'), join(dir, 'b.md'), join(dir, 'deep/c.ts')]);
    expect(sourceFiles(join(dir, 'missing'), () => true)).toEqual([]);
  });
});
