/**
 * A vite plugin for electron-vite's main build: once main is written, bundle the
 * sim runner (electron/runners/sim/main.ts) into one self-contained CommonJS file,
 * out/main/sim-runner.cjs.
 *
 * Why a separate bundle rather than a second main entry: the packaged app runs the
 * runner with the Electron binary as Node (ELECTRON_RUN_AS_NODE=1), outside the
 * asar archive (electron-builder's asarUnpack). A file with no chunks and no
 * node_modules imports runs the same there as in development, and CommonJS needs
 * no ESM loader support for asar paths.
 */
import { resolve } from 'node:path';
import { build, type Plugin } from 'vite';

export const SIM_RUNNER_ENTRY = 'electron/runners/sim/main.ts';
export const SIM_RUNNER_BUNDLE = 'sim-runner.cjs';

export function simRunnerBundle(options: { root?: string; outDir?: string } = {}): Plugin {
  const root = options.root ?? process.cwd();
  const outDir = resolve(root, options.outDir ?? 'out/main');
  return {
    name: 'exobar:sim-runner-bundle',
    apply: 'build',
    async closeBundle() {
      await buildSimRunner(root, outDir);
    },
  };
}

/** Bundles the sim runner into `<outDir>/sim-runner.cjs`. */
export async function buildSimRunner(root: string, outDir: string): Promise<void> {
  await build({
    configFile: false,
    root,
    logLevel: 'warn',
    // Bundle everything (zod, pino): the file must run with nothing beside it.
    ssr: { noExternal: true, target: 'node' },
    build: {
      ssr: resolve(root, SIM_RUNNER_ENTRY),
      outDir,
      emptyOutDir: false,
      target: 'node20',
      minify: false,
      reportCompressedSize: false,
      copyPublicDir: false,
      rolldownOptions: { output: { format: 'cjs', entryFileNames: SIM_RUNNER_BUNDLE, codeSplitting: false } },
    },
  });
}
