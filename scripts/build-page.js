#!/usr/bin/env node
// Builds the page `exobar serve` serves (out/renderer, from renderer/ with
// renderer/vite.config.ts) when it is missing or older than its sources, saying so in
// one line, as scripts/build-node.js does for the command line. Plain JavaScript: plain
// Node runs it.
//
//   node scripts/build-page.js --if-stale   build only when missing or stale (one line says so)
//
// bin/exobar.js calls ensurePageBuild() before `exobar serve`: a fresh clone's
// `npm ci && npx exobar serve` serves the page, not "the page is not built yet".
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { newestMtime, withBuildLock } from './build-node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const thisScript = fileURLToPath(import.meta.url);

export const PAGE_OUTPUT = 'out/renderer/index.html';
// Beside out/renderer, not in it: the page's build empties its folder.
const STAMP = 'out/renderer-build-stamp.json';
const LOCK = 'out/.page-build.lock';
const SOURCE_DIRS = ['renderer', 'shared'];
const SOURCE_FILES = ['renderer/vite.config.ts', 'package.json', 'package-lock.json'];
/** @param {string} name */
const isPageSource = (name) => /\.(tsx?|css|html|svg|png|json)$/.test(name) && !/\.test\.tsx?$/.test(name);

/** @param {string} projectRoot @returns {number} the newest mtime (ms) among the page's sources */
function newestPageSource(projectRoot) {
  return newestMtime(projectRoot, { dirs: SOURCE_DIRS, files: SOURCE_FILES, accept: isPageSource, skipped: new Set() });
}

/**
 * Why the page needs building, or null when it is current.
 * @param {string} projectRoot @returns {'missing' | 'stale' | null}
 */
export function pageBuildNeed(projectRoot = root) {
  if (!existsSync(join(projectRoot, PAGE_OUTPUT))) return 'missing';
  let startedAt;
  try {
    startedAt = JSON.parse(readFileSync(join(projectRoot, STAMP), 'utf8')).startedAt;
  } catch {
    // Built by another build (electron-vite, `npm run build:renderer`): its files' age decides.
    startedAt = statSync(join(projectRoot, PAGE_OUTPUT)).mtimeMs;
  }
  if (typeof startedAt !== 'number') return 'missing';
  return newestPageSource(projectRoot) > startedAt ? 'stale' : null;
}

/** @param {'missing' | 'stale'} need */
export function pageBuildingLine(need) {
  return `exobar: building the page into out/renderer (${need === 'missing' ? 'first run' : 'the sources changed'})...`;
}

/**
 * Makes sure the page is built and current; builds it in a child process when not, with
 * one line on stderr saying so. A production install without vite keeps the "not built"
 * page and says why.
 * @param {{ log?: (line: string) => void }} [options]
 */
export function ensurePageBuild(options = {}) {
  const need = pageBuildNeed();
  if (need === null) return;
  const log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  log(pageBuildingLine(need));
  const result = spawnSync(process.execPath, [thisScript, '--if-stale', '--quiet'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0)
    throw new Error(`building the page failed (${result.error?.message ?? `exit ${result.status}`}): run "npm run build:renderer" to see why`);
}

async function build() {
  const startedAt = Date.now();
  const vite = await import('vite');
  await vite.build({ configFile: join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn' });
  writeFileSync(join(root, STAMP), `${JSON.stringify({ startedAt, builtAt: Date.now() })}\n`);
}

/** @param {string[]} argv @returns {Promise<number>} */
async function main(argv) {
  const ifStale = argv.includes('--if-stale');
  const need = pageBuildNeed();
  if (ifStale && need === null) return 0;
  if (ifStale && need !== null && !argv.includes('--quiet')) console.error(pageBuildingLine(need));
  await withBuildLock(async () => {
    if (ifStale && pageBuildNeed() === null) return;
    await build();
  }, LOCK);
  return 0;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(`exobar: building the page failed: ${error instanceof Error ? error.stack : String(error)}`);
      process.exitCode = 1;
    },
  );
}
