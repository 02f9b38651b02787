/**
 * Facts written once: each one has a home file, and no other product file writes it
 * again (a copy that drifts is how one view says serving while another says failed).
 * Reads the product sources as text; comments and tests do not count.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT as ROOT, sourceFiles } from '../support/source-files';

/** The product's TypeScript below `dir`, without its tests. */
const sources = (dir: string): string[] => sourceFiles(dir, (path) => /\.(ts|tsx)$/.test(path) && !/\.test\.tsx?$/.test(path));

/** The code of a file without its comments (line and block), line by line. */
function codeLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (block) => block.replace(/[^\n]/g, ''))
    .split('\n')
    .map((line) => line.replace(/(^|[^:'"`])\/\/.*$/, '$1'));
}

const PRODUCT = ['electron', 'shared', 'renderer/src'].flatMap((dir) => sources(join(ROOT, dir))).map((p) => relative(ROOT, p));

/** The files outside `home` whose code matches `pattern`. */
function writtenOutside(pattern: RegExp, home: string): string[] {
  return PRODUCT.filter((file) => file !== home && codeLines(join(ROOT, file)).some((line) => pattern.test(line)));
}

const FACTS: Array<{ fact: string; pattern: RegExp; home: string }> = [
  {
    fact: 'the serving rule (RunnerReady or RunnerRunning)',
    pattern: /RunnerReady['"].{0,80}RunnerRunning['"]|RunnerRunning['"].{0,80}RunnerReady['"]/,
    home: 'shared/instance-state.ts',
  },
  { fact: "exo's prefill chunk of 4096 tokens", pattern: /(?<![\w.])4096(?![\w])|4_096/, home: 'shared/runner-protocol.ts' },
  // As a number in code; an example address in a help text ("http://127.0.0.1:52415") is words.
  { fact: "exo's API port", pattern: /(?<![\w:])52415(?![\w])/, home: 'shared/addresses.ts' },
  { fact: "exobar's API port", pattern: /(?<![\w:])52416(?![\w])/, home: 'shared/addresses.ts' },
  {
    fact: 'the stopping rule (RunnerShuttingDown or RunnerShutdown)',
    pattern: /RunnerShuttingDown['"].{0,80}RunnerShutdown['"]|RunnerShutdown['"].{0,80}RunnerShuttingDown['"]/,
    home: 'shared/instance-state.ts',
  },
  { fact: 'percentile and median', pattern: /\b(?:function|const|let)\s+(?:percentile|median)\b/, home: 'shared/stats.ts' },
  { fact: 'the TTFT window', pattern: /\bTTFT_\w*\s*=\s*\d|\bnew TtftStats\(\s*\d/, home: 'shared/stats.ts' },
  { fact: "the page's Content-Security-Policy", pattern: /default-src/, home: 'shared/page-serving.ts' },
  { fact: 'the content types by file extension', pattern: /['"]text\/(?:javascript|css)/, home: 'shared/page-serving.ts' },
  { fact: "the catalog model's schema", pattern: /sizeClass:\s*z\./, home: 'shared/catalog.ts' },
  { fact: 'the words of a loading runner', pattern: /Loading \$\{[^}]*\} of \$\{/, home: 'shared/status-words.ts' },
  {
    fact: 'the tone of a runner status',
    pattern: /['"]RunnerReady['"]\)?\s*(?:return|:)\s*['"]ok['"]|function\s+\w*[rR]unnerTone\b|function\s+statusTone\b/,
    home: 'shared/status-words.ts',
  },
  { fact: 'exponential backoff', pattern: /\*\s*2\s*\*\*|\bMath\.pow\(\s*2\b|\b2\s*\*\*\s*\(?\w/, home: 'shared/backoff.ts' },
];

/** The bench and the tests' support code: they measure with the product's statistics too. */
const MEASURING = ['bench', 'test/support'].flatMap((dir) => sources(join(ROOT, dir))).map((p) => relative(ROOT, p));

describe('facts written once', () => {
  it('reads the product tree', () => {
    expect(PRODUCT.length).toBeGreaterThan(100);
    expect(PRODUCT).toContain('shared/instance-state.ts');
  });

  it('the bench and the test support take their median and percentile from shared/stats.ts (test/support/median.ts only wraps it)', () => {
    const { pattern } = FACTS.find((f) => f.fact === 'percentile and median')!;
    expect(MEASURING).toContain('bench/exo-poll-cpu.ts');
    const own = MEASURING.filter((file) => file !== 'test/support/median.ts' && codeLines(join(ROOT, file)).some((line) => pattern.test(line)));
    expect(own).toEqual([]);
  });

  for (const { fact, pattern, home } of FACTS) {
    it(`${fact}: only in ${home}`, () => {
      expect(
        codeLines(join(ROOT, home)).some((line) => pattern.test(line)),
        `${home} holds it`,
      ).toBe(true);
      expect(writtenOutside(pattern, home)).toEqual([]);
    });
  }
});
