/**
 * electron-vite builds the three parts of the app into out/:
 *   out/main/index.js          main process (ESM; package.json is "type": "module"), its npm dependencies bundled in
 *   out/main/sim-runner.cjs    the sim runner, self-contained (see scripts/vite-plugin-sim-runner.ts)
 *   out/preload/index.cjs      preload (CommonJS: sandboxed preloads cannot be ES modules)
 *   out/renderer/index.html    the React app
 * electron-builder then packages out/ (electron-builder.yml).
 *
 * EXOBAR_OUT_DIR builds somewhere else (the package check's test builds into a temporary
 * directory so it never disturbs an out/ that `exobar serve` is serving).
 */
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import { simRunnerBundle } from './scripts/vite-plugin-sim-runner';

const root = import.meta.dirname;
const out = process.env.EXOBAR_OUT_DIR ? resolve(process.env.EXOBAR_OUT_DIR) : resolve(root, 'out');

export default defineConfig({
  main: {
    build: {
      outDir: resolve(out, 'main'),
      // pino, zod and yazl are bundled into index.js (only Node built-ins and electron stay
      // imports): nothing is loaded from node_modules inside the archive, and electron-builder
      // packs no node_modules (electron-builder.yml).
      externalizeDeps: false,
      rolldownOptions: { input: { index: resolve(root, 'electron/main/index.ts') } },
    },
    plugins: [simRunnerBundle({ root, outDir: resolve(out, 'main') })],
  },
  preload: {
    build: {
      outDir: resolve(out, 'preload'),
      // Everything the preload imports is bundled in: a sandboxed preload can only require 'electron'.
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve(root, 'electron/preload.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'renderer'),
    base: './',
    plugins: [react()],
    build: {
      outDir: resolve(out, 'renderer'),
      sourcemap: false,
      // electron-vite leaves the renderer unminified by default; the popover should parse fast.
      minify: true,
      chunkSizeWarningLimit: 1000,
      rolldownOptions: { input: resolve(root, 'renderer/index.html') },
    },
  },
});
