/**
 * Comments that a reader of a clone can follow: no comment cites a path outside the repo
 * (a file on one developer's machine, a folder beside the repo), every `.md` a comment
 * names exists, and a comment that cites exo's source names the exo version it was read
 * from and leaves the line ranges to docs/exo.md ("exo source this code follows"),
 * where they are kept once for the next exo version.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT, sourceFiles } from '../support/source-files';

// Generated output and captured data hold no comments of ours.
const SKIP = new Set(['dist', 'build', 'images', 'fixtures']);
const EXO_VERSION = 'exo 0.3.70';

/** Whether `path` lies in a folder of generated output or captured data. */
const skipped = (path: string): boolean =>
  relative(ROOT, path)
    .split(sep)
    .some((part) => SKIP.has(part));
const sources = (dir: string): string[] => sourceFiles(dir, (path) => /\.(ts|tsx|mts|mjs|cjs|js)$/.test(path) && !path.endsWith('.d.ts') && !skipped(path));

/** A file's comments, each a block comment or a run of consecutive line comments, with its first line. */
export function comments(text: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const lineOf = (index: number): number => text.slice(0, index).split('\n').length;
  // Block comments, runs of whole-line comments, and a comment after code on its line.
  for (const m of text.matchAll(/\/\*[\s\S]*?\*\/|(?:^[ \t]*\/\/.*\n?)+|(?<=\S[ \t]+)\/\/ .*$/gm)) found.push({ line: lineOf(m.index), text: m[0] });
  return found;
}

/** What is wrong with one comment of `file`, in words; empty when nothing is. */
export function commentFaults(file: string, comment: string): string[] {
  const faults: string[] = [];
  if (/\/work\/|\/home\/[a-z]|\bshared\/(?:exo|reviews)\/|\bshared\/(?:domain|architecture)\.md/.test(comment)) faults.push('cites a path outside the repo');
  for (const m of comment.matchAll(/(?<![\w./-])((?:\.{1,2}\/|[\w-]+\/)*[\w.-]+\.md)\b/g)) {
    const cited = m[1]!;
    const hits = [resolve(ROOT, cited), resolve(dirname(file), cited)];
    if (!hits.some((p) => p.startsWith(ROOT) && existsSync(p))) faults.push(`cites ${cited}, which is not in the repo`);
  }
  if (/src\/exo\//.test(comment)) {
    if (!comment.includes(EXO_VERSION) && !comment.includes('docs/exo.md')) faults.push(`cites exo's source without "${EXO_VERSION}"`);
    if (/src\/exo\/[\w/.]+\.py:\d/.test(comment)) faults.push('cites exo source line ranges (they are kept in docs/exo.md)');
  }
  return faults;
}

describe('comments stay true', () => {
  it('finds the faults it is for', () => {
    const here = join(ROOT, 'electron/core/x.ts');
    expect(commentFaults(here, '/** exo flags, /work/shared/exo/README.md §6 */')).toContain('cites a path outside the repo');
    expect(commentFaults(here, '// see docs/no-such-file.md')).toEqual(['cites docs/no-such-file.md, which is not in the repo']);
    expect(commentFaults(here, '/** (src/exo/api/main.py) */')).toEqual([`cites exo's source without "${EXO_VERSION}"`]);
    expect(commentFaults(here, '/** (exo 0.3.70, src/exo/api/main.py:1940-1942) */')).toEqual(['cites exo source line ranges (they are kept in docs/exo.md)']);
    expect(commentFaults(here, '/** (exo 0.3.70, src/exo/api/main.py; docs/exo.md) */')).toEqual([]);
    expect(comments('a();\n// one\n// two\nb(); /* three */\nc(); // four\n').map((c) => c.line)).toEqual([2, 4, 5]);
  });

  it('no comment in the tree cites what a clone cannot open, or exo source without its version', () => {
    const faults = ['electron', 'shared', 'renderer', 'test', 'bench', 'scripts', 'bin']
      .filter((dir) => existsSync(join(ROOT, dir)))
      .flatMap((dir) => sources(join(ROOT, dir)))
      .filter((file) => file !== fileURLToPath(import.meta.url)) // its own cases are data, not comments
      .flatMap((file) =>
        comments(readFileSync(file, 'utf8')).flatMap((c) => commentFaults(file, c.text).map((fault) => `${relative(ROOT, file)}:${c.line}: ${fault}`)),
      );
    expect(faults).toEqual([]);
  });

  it('every doc that cites exo source names the exo version', () => {
    const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((file) => file.endsWith('.md'));
    const unversioned = docs.filter((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return text.includes('src/exo/') && !text.includes(EXO_VERSION);
    });
    expect(unversioned).toEqual([]);
  });

  it('docs/exo.md keeps the exo source this code follows, with its version', () => {
    const doc = readFileSync(join(ROOT, 'docs/exo.md'), 'utf8');
    const section = doc.split(/^## /m).find((s) => s.startsWith('exo source this code follows'));
    expect(section).toBeDefined();
    expect(section).toContain(`**${EXO_VERSION}**`);
  });
});
