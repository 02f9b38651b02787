#!/usr/bin/env node
// Builds what runs outside Electron into out/, from the TypeScript sources, with vite
// (vite.node.config.ts):
//   out/node/exobar.mjs       the command line (`exobar serve`, `exobar diagnostics`) and the core
//   out/node/bench.mjs        `npm run bench`
//   out/main/sim-runner.cjs   the sim runner, the same bundle the app ships
// Plain JavaScript so that plain Node runs it: tsx is a development tool only.
//
//   node scripts/build-node.js             build
//   node scripts/build-node.js --if-stale  build only when out/ is missing or older than the
//                                          sources, saying so in one line (--quiet: without it)
//   node scripts/build-node.js --prepare   npm's prepare step: as --if-stale, and a no-op without vite
//
// bin/exobar.js and the test setup call ensureNodeBuild(), which builds in a child process
// (vite stays out of the server's memory) with one line on stderr saying so.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const thisScript = fileURLToPath(import.meta.url);

/** What the build writes; all of them must exist for the build to count as done. */
export const NODE_BUILD_OUTPUTS = ['out/node/exobar.mjs', 'out/node/bench.mjs', 'out/main/sim-runner.cjs'];
const STAMP = 'out/node/build-stamp.json';
const LOCK = 'out/.node-build.lock';

/** Folders whose TypeScript goes into the build (tests excluded), and single files that shape it. */
// test/support too: the bench bundles the fake exo and its helpers from there.
const SOURCE_DIRS = ['electron', 'shared', 'bench', 'test/support'];
// The Electron main process (built by electron-vite) and the MLX runner (Python) are not in it.
const SKIPPED_DIRS = new Set([join('electron', 'main'), join('electron', 'runners', 'mlx')]);
const SOURCE_FILES = ['vite.node.config.ts', 'scripts/vite-plugin-sim-runner.ts', 'scripts/build-node.js', 'package.json', 'package-lock.json'];

/** @param {string} name */
const isSourceTs = (name) => name.endsWith('.ts') && !name.endsWith('.test.ts');

/**
 * @param {string} projectRoot @param {string} dir relative
 * @param {(name: string) => boolean} [accept] which files count (default: non-test .ts)
 * @param {Set<string>} [skipped] folders (relative paths) left out
 * @returns {number} the newest mtime (ms) of an accepted file under dir
 */
function newestTs(projectRoot, dir, accept = isSourceTs, skipped = SKIPPED_DIRS) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(join(projectRoot, dir), { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skipped.has(path)) newest = Math.max(newest, newestTs(projectRoot, path, accept, skipped));
    } else if (accept(entry.name)) {
      newest = Math.max(newest, statSync(join(projectRoot, path)).mtimeMs);
    }
  }
  return newest;
}

/**
 * The newest mtime (ms) among a build's sources: the accepted files under `dirs` and the
 * single `files`.
 * @param {string} projectRoot
 * @param {{ dirs: string[]; files: string[]; accept?: (name: string) => boolean; skipped?: Set<string> }} sources
 * @returns {number}
 */
export function newestMtime(projectRoot, sources) {
  let newest = 0;
  for (const dir of sources.dirs) newest = Math.max(newest, newestTs(projectRoot, dir, sources.accept, sources.skipped));
  for (const file of sources.files) {
    try {
      newest = Math.max(newest, statSync(join(projectRoot, file)).mtimeMs);
    } catch {
      // not there (no lock file): nothing to compare
    }
  }
  return newest;
}

/** @param {string} projectRoot @returns {number} the newest mtime (ms) among the build's sources */
export function newestSourceMtime(projectRoot = root) {
  return newestMtime(projectRoot, { dirs: SOURCE_DIRS, files: SOURCE_FILES });
}

/**
 * Why out/ needs building, or null when it is up to date: every output exists and no
 * source changed since the last build started.
 * @param {string} projectRoot
 * @returns {'missing' | 'stale' | null}
 */
export function nodeBuildNeed(projectRoot = root) {
  if (NODE_BUILD_OUTPUTS.some((file) => !existsSync(join(projectRoot, file)))) return 'missing';
  let startedAt;
  try {
    startedAt = JSON.parse(readFileSync(join(projectRoot, STAMP), 'utf8')).startedAt;
  } catch {
    return 'missing';
  }
  if (typeof startedAt !== 'number') return 'missing';
  return newestSourceMtime(projectRoot) > startedAt ? 'stale' : null;
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/**
 * Runs `work` holding out/.node-build.lock (or `lockPath`), so that two processes starting
 * at once (two test files, two terminals) do not write out/ over each other. A lock left by
 * a process that died is taken over.
 * @template T @param {() => Promise<T>} work @param {string} [lockPath] @returns {Promise<T>}
 */
export async function withBuildLock(work, lockPath = LOCK) {
  const lock = join(root, lockPath);
  mkdirSync(join(root, 'out'), { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      let owner = NaN;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        // the owner is between mkdir and writing its pid
      }
      if (Number.isInteger(owner) && owner > 0 && !alive(owner)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lockPath} held for 5 minutes by pid ${owner}; remove it if no build is running`);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds out/ with vite (in this process) and writes the stamp. */
async function build() {
  const startedAt = Date.now();
  const vite = await import('vite');
  await vite.build({ configFile: join(root, 'vite.node.config.ts'), logLevel: 'warn' });
  writeFileSync(join(root, STAMP), `${JSON.stringify({ startedAt, builtAt: Date.now() })}\n`);
}

/** @param {string} name */
function resolvable(name) {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** @param {'missing' | 'stale'} need */
function buildingLine(need) {
  return `exobar: building the command line and the sim runner into out/ (${need === 'missing' ? 'first run' : 'the sources changed'})...`;
}

/**
 * Makes sure out/ is built and current; builds in a child process when not, saying so
 * in one line on stderr. Returns without output when it is current (a few ms).
 * @param {{ log?: (line: string) => void }} [options]
 */
export function ensureNodeBuild(options = {}) {
  const need = nodeBuildNeed();
  if (need === null) return;
  (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(buildingLine(need));
  // NODE_ENV=production: a test runner's NODE_ENV=test must not reach the bundles.
  const result = spawnSync(process.execPath, [thisScript, '--if-stale', '--quiet'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) throw new Error(`building out/ failed (${result.error?.message ?? `exit ${result.status}`}): run "npm run build:node" to see why`);
}

/** @param {string[]} argv @returns {Promise<number>} */
async function main(argv) {
  const ifStale = argv.includes('--if-stale') || argv.includes('--prepare');
  if (argv.includes('--prepare') && !resolvable('vite')) {
    console.error('exobar: vite is not installed (a production install): skipping the build of out/');
    return 0;
  }
  const need = nodeBuildNeed();
  if (ifStale && need === null) return 0;
  if (ifStale && need !== null && !argv.includes('--quiet')) console.error(buildingLine(need));
  await withBuildLock(async () => {
    // Another process may have built it while this one waited for the lock.
    if (ifStale && nodeBuildNeed() === null) return;
    await build();
  });
  return 0;
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error) => {
      console.error(`exobar: building out/ failed: ${error instanceof Error ? error.stack : String(error)}`);
      process.exitCode = 1;
    },
  );
}
