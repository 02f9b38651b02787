/**
 * No import circles in the tree: two modules that import each other (even types only)
 * make evaluation order matter and hide which one is the vocabulary. A shared word
 * goes into a leaf both import (cli-command.ts, instance-vocabulary.ts, node-error.ts).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT, sourceFiles } from '../support/source-files';

/** The TypeScript modules below `dir` (declaration files import nothing that runs). */
const sources = (dir: string): string[] => sourceFiles(dir, (path) => /\.tsx?$/.test(path) && !path.endsWith('.d.ts'));

/** Each file's relative imports and re-exports (static, type-only included), resolved to files of the tree. */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const deps: string[] = [];
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:import|export)\s[^'";]*?from\s+['"](\.[^'"]+)['"]/g)) {
      const base = resolve(dirname(file), m[1]!);
      const hit = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((c) => known.has(c));
      if (hit) deps.push(hit);
    }
    graph.set(file, deps);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.map((f) => relative(ROOT, f)).sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('import circles', () => {
  it('finds a circle when there is one', () => {
    const a = join(ROOT, 'a.ts');
    const b = join(ROOT, 'b.ts');
    expect(
      circles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });

  it('there are none in the tree', () => {
    const files = ['electron', 'shared', 'renderer', 'bench', 'test'].flatMap((dir) => sources(join(ROOT, dir)));
    expect(files.length).toBeGreaterThan(300);
    expect(circles(importGraph(files))).toEqual([]);
  });
});
