/**
 * Where the app's files are, in development (`electron .` after `npm run build`)
 * and in the packaged app (electron-builder: the app in Resources/app.asar, some
 * files unpacked beside it, extraResources in Resources/).
 */
import { join, sep } from 'node:path';
import { MLX_RUNNER_DIR_ENV, SIM_RUNNER_JS_ENV } from '../core/runner-entry';

export interface AppLocation {
  /** Directory of the built main bundle (out/main), from import.meta.url. */
  mainDir: string;
  /** app.getAppPath(): the project root in development, …/Resources/app.asar when packaged. */
  appPath: string;
  /** process.resourcesPath: …/Contents/Resources when packaged. */
  resourcesPath: string;
  isPackaged: boolean;
}

export interface AppPaths {
  preload: string;
  rendererDir: string;
  trayImagesDir: string;
  /** The built sim runner, outside the asar archive when packaged (asarUnpack). */
  simRunnerJs: string;
  /** The MLX runner's Python package (extraResources), or null to use the source tree. */
  mlxRunnerDir: string | null;
}

/** Files inside app.asar that electron-builder unpacked live at the same path under app.asar.unpacked. */
export function unpackedPath(path: string): string {
  return path.replace(`${sep}app.asar${sep}`, `${sep}app.asar.unpacked${sep}`);
}

export function appPaths(location: AppLocation): AppPaths {
  const out = join(location.mainDir, '..');
  return {
    preload: join(out, 'preload', 'index.cjs'),
    rendererDir: join(out, 'renderer'),
    trayImagesDir: location.isPackaged ? join(location.resourcesPath, 'tray') : join(location.appPath, 'build', 'tray'),
    simRunnerJs: unpackedPath(join(location.mainDir, 'sim-runner.cjs')),
    mlxRunnerDir: location.isPackaged ? join(location.resourcesPath, 'runners', 'mlx') : null,
  };
}

/**
 * The environment that tells electron/core where the runners are (see
 * core/runner-entry.ts); set in the main process before the core starts.
 */
export function runnerEnvironment(paths: AppPaths): Record<string, string> {
  const env: Record<string, string> = { [SIM_RUNNER_JS_ENV]: paths.simRunnerJs };
  if (paths.mlxRunnerDir) env[MLX_RUNNER_DIR_ENV] = paths.mlxRunnerDir;
  return env;
}
