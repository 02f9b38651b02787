/**
 * How to start a runner process, in development and in the packaged app.
 *
 * Development and `exobar serve`: the sim runner is TypeScript, run by this Node with
 * tsx's loader. Packaged app: there is no tsx and no source, only the bundle the build
 * wrote (out/main/sim-runner.cjs, unpacked from the asar archive), run by the app's
 * own binary as plain Node (ELECTRON_RUN_AS_NODE=1, process.execPath). The Electron
 * main process says where the built files are through the environment variables
 * below before it starts the core, so this module needs no Electron import.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Absolute path of the built sim runner (set by the Electron main process). */
export const SIM_RUNNER_JS_ENV = 'EXOBAR_SIM_RUNNER_JS';
/** Directory of the MLX runner's Python package (set by the packaged app: its resources). */
export const MLX_RUNNER_DIR_ENV = 'EXOBAR_MLX_RUNNER_DIR';

const SIM_RUNNER_SOURCE = fileURLToPath(new URL('../runners/sim/main.ts', import.meta.url));
const MLX_RUNNER_SOURCE_DIR = fileURLToPath(new URL('../runners/mlx', import.meta.url));

/** A command line without the runner's own arguments; the caller appends those (`--model ...`) and merges env. */
export interface RunnerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface RunnerEntryOptions {
  /** The built sim runner; default `$EXOBAR_SIM_RUNNER_JS`. */
  builtRunner?: string | null;
  /** The binary to run it with; default process.execPath (Node, or the Electron binary in the app). */
  execPath?: string;
  /** True when execPath is the Electron binary; default: this process runs in Electron. */
  inElectron?: boolean;
  env?: NodeJS.ProcessEnv;
  exists?: (path: string) => boolean;
}

/**
 * The command that starts a sim runner: the built JS when it exists (packaged app,
 * or a dev run of the app after `npm run build`), else tsx with the TypeScript source.
 * Append the runner's arguments to `args` and merge `env` over the spawn environment.
 */
export function resolveSimRunnerCommand(options: RunnerEntryOptions = {}): RunnerCommand {
  const env = options.env ?? process.env;
  const exists = options.exists ?? existsSync;
  const command = options.execPath ?? process.execPath;
  const inElectron = options.inElectron ?? Boolean(process.versions.electron);
  // The Electron binary acts as Node only with this variable; plain Node ignores it.
  const runEnv: Record<string, string> = inElectron ? { ELECTRON_RUN_AS_NODE: '1' } : {};
  const built = options.builtRunner !== undefined ? options.builtRunner : env[SIM_RUNNER_JS_ENV] || null;
  if (built && exists(built)) return { command, args: [built], env: runEnv };
  return { command, args: ['--import', import.meta.resolve('tsx'), SIM_RUNNER_SOURCE], env: runEnv };
}

/** The MLX runner's directory: `$EXOBAR_MLX_RUNNER_DIR` (the packaged app's resources) else the source tree. */
export function resolveMlxRunnerDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[MLX_RUNNER_DIR_ENV] || MLX_RUNNER_SOURCE_DIR;
}
