/**
 * Builds what runs outside Electron (scripts/build-node.js runs this; `npm ci` does through
 * the prepare step, `exobar serve` on first run):
 *   out/node/exobar.mjs       the command line and the core (bin/exobar.js imports it)
 *   out/node/bench.mjs        the benchmarks (`npm run bench`), on the same built core
 *   out/node/chunks/          code both share
 *   out/main/sim-runner.cjs   the sim runner: the bundle the app ships (scripts/vite-plugin-sim-runner.ts)
 * Packages (zod, pino, yazl; openai for the bench) stay imports from node_modules, as in
 * the app's main bundle; the sim runner bundles everything, since it runs with nothing beside it.
 */
import { resolve } from 'node:path';
import { defineConfig } from 'vite';
import { simRunnerBundle } from './scripts/vite-plugin-sim-runner.ts';

const root = import.meta.dirname;

export default defineConfig({
  root,
  logLevel: 'warn',
  publicDir: false,
  plugins: [simRunnerBundle({ root, outDir: resolve(root, 'out/main') })],
  ssr: { target: 'node' },
  build: {
    ssr: true,
    outDir: resolve(root, 'out/node'),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    reportCompressedSize: false,
    rolldownOptions: {
      input: { exobar: resolve(root, 'electron/cli/cli.ts'), bench: resolve(root, 'bench/run.ts') },
      output: { format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs' },
    },
  },
});
