/**
 * How to start a runner process, in the packaged app, in `exobar serve` and in the tests.
 *
 * The sim runner always runs as built JavaScript: the self-contained bundle the build
 * writes (out/main/sim-runner.cjs), started as plain Node. The packaged app runs it from
 * outside the asar archive with its own binary (ELECTRON_RUN_AS_NODE=1, process.execPath)
 * and says where it is through the environment variables below before it starts the
 * core, so this module needs no Electron import. `exobar serve`, the bench and the
 * tests build out/ before they start (bin/exobar.js, scripts/build-node.js) and use the
 * default path beside the package.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root';

/** Absolute path of the built sim runner (set by the Electron main process). */
export const SIM_RUNNER_JS_ENV = 'EXOBAR_SIM_RUNNER_JS';
/** Directory of the MLX runner's Python package (set by the packaged app: its resources). */
export const MLX_RUNNER_DIR_ENV = 'EXOBAR_MLX_RUNNER_DIR';

/** Where the build writes the sim runner, relative to the package root (the file electron-builder ships). */
export const SIM_RUNNER_BUILT_PATH = 'out/main/sim-runner.cjs';

/** A command line without the runner's own arguments; the caller appends those (`--model ...`) and merges env. */
export interface RunnerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface RunnerEntryOptions {
  /** The built sim runner; default `$EXOBAR_SIM_RUNNER_JS`, else {@link defaultSimRunnerPath}. */
  builtRunner?: string | null;
  /** The binary to run it with; default process.execPath (Node, or the Electron binary in the app). */
  execPath?: string;
  /** True when execPath is the Electron binary; default: this process runs in Electron. */
  inElectron?: boolean;
  env?: NodeJS.ProcessEnv;
  exists?: (path: string) => boolean;
}

/** `<package root>/out/main/sim-runner.cjs`: where `npm run build:node` (and the app's build) writes the sim runner. */
export function defaultSimRunnerPath(): string {
  return join(packageRoot(), SIM_RUNNER_BUILT_PATH);
}

/**
 * The command that starts a sim runner: the built bundle, run as plain Node. The one the
 * caller or `$EXOBAR_SIM_RUNNER_JS` names, else (or when that file is missing: an app
 * started from a tree where only `npm run build:node` ran) the one beside the package.
 * There is no fallback to the TypeScript source: what runs is what ships. A missing
 * bundle shows as a runner that exits before its hello, with Node's "Cannot find
 * module" in the runner's stderr log. Append the runner's arguments to `args` and merge
 * `env` over the spawn environment.
 */
export function resolveSimRunnerCommand(options: RunnerEntryOptions = {}): RunnerCommand {
  const env = options.env ?? process.env;
  const command = options.execPath ?? process.execPath;
  const inElectron = options.inElectron ?? Boolean(process.versions.electron);
  // The Electron binary acts as Node only with this variable; plain Node ignores it.
  const runEnv: Record<string, string> = inElectron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
  const exists = options.exists ?? existsSync;
  const named = options.builtRunner || env[SIM_RUNNER_JS_ENV] || null;
  const fallback = defaultSimRunnerPath();
  const built = named && (exists(named) || !exists(fallback)) ? named : fallback;
  return { command, args: [built], env: runEnv };
}

/** The MLX runner's directory: `$EXOBAR_MLX_RUNNER_DIR` (the packaged app's resources) else the source tree. */
export function resolveMlxRunnerDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[MLX_RUNNER_DIR_ENV] || join(packageRoot(), 'electron/runners/mlx');
}
