import { describe, expect, it } from 'vitest';
import { appPaths, runnerEnvironment } from './app-paths';

describe('app paths', () => {
  it('packaged: preload and renderer in the asar, runner unpacked, tray images and MLX runner in Resources', () => {
    const resources = '/Applications/exobar.app/Contents/Resources';
    const paths = appPaths({ mainDir: `${resources}/app.asar/out/main`, appPath: `${resources}/app.asar`, resourcesPath: resources, isPackaged: true });
    expect(paths).toEqual({
      preload: `${resources}/app.asar/out/preload/index.cjs`,
      rendererDir: `${resources}/app.asar/out/renderer`,
      trayImagesDir: `${resources}/tray`,
      simRunnerJs: `${resources}/app.asar.unpacked/out/main/sim-runner.cjs`,
      mlxRunnerDir: `${resources}/runners/mlx`,
    });
    expect(runnerEnvironment(paths)).toEqual({
      EXOBAR_SIM_RUNNER_JS: `${resources}/app.asar.unpacked/out/main/sim-runner.cjs`,
      EXOBAR_MLX_RUNNER_DIR: `${resources}/runners/mlx`,
    });
  });

  it('development: everything from the project, the MLX runner from its source tree', () => {
    const paths = appPaths({ mainDir: '/src/exobar/out/main', appPath: '/src/exobar', resourcesPath: '/x/electron/dist/Resources', isPackaged: false });
    expect(paths).toEqual({
      preload: '/src/exobar/out/preload/index.cjs',
      rendererDir: '/src/exobar/out/renderer',
      trayImagesDir: '/src/exobar/build/tray',
      simRunnerJs: '/src/exobar/out/main/sim-runner.cjs',
      mlxRunnerDir: null,
    });
    expect(runnerEnvironment(paths)).toEqual({ EXOBAR_SIM_RUNNER_JS: '/src/exobar/out/main/sim-runner.cjs' });
  });
});
