#!/usr/bin/env node
// The `exobar` command: runs the built command line, out/node/exobar.mjs (from
// electron/cli/cli.ts). `npm ci` builds it (the prepare step); when it is missing or older
// than the sources, it is built here first, with one line on stderr saying so. The
// sim runners it starts are the built out/main/sim-runner.cjs, as in the app. `exobar
// serve` also builds the page it serves (out/renderer) when missing or stale, likewise.
import { ensureNodeBuild } from '../scripts/build-node.js';
import { ensurePageBuild } from '../scripts/build-page.js';

/** True where vite is installed (a clone); a production install has no sources to build. */
function canBuild() {
  try {
    import.meta.resolve('vite');
    return true;
  } catch {
    return false;
  }
}

try {
  ensureNodeBuild();
  if (process.argv[2] === 'serve' && canBuild()) ensurePageBuild();
} catch (error) {
  process.stderr.write(`exobar: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
const { main } = await import('../out/node/exobar.mjs');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is stopped by now; do not let a stray handle keep the process alive.
setTimeout(() => process.exit(code), 2000).unref();
