import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSimRunner, SIM_RUNNER_BUNDLE } from '../../scripts/vite-plugin-sim-runner';
import { defaultSimRunnerPath, resolveMlxRunnerDir, resolveSimRunnerCommand, type RunnerCommand } from './runner-entry';

const root = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'exobar-runner-entry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Starts the runner for a model and returns its first stdout line (the hello); closing stdin ends it. */
function helloOf(cmd: RunnerCommand): Promise<Record<string, unknown>> {
  const child = spawn(cmd.command, [...cmd.args, '--model', 'sim/llama-3.2-1b', '--time-scale', '0.01'], {
    env: { ...process.env, ...cmd.env, EXOBAR_SIM_GPU_DIR: join(scratch, 'gpu'), MLX_METAL_FAST_SYNCH: '0' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      child.stdin.end();
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`runner exited (${code}) before its hello`)));
  });
}

describe('resolveSimRunnerCommand', () => {
  it('uses the built JS with the Electron binary as Node in the app', () => {
    const cmd = resolveSimRunnerCommand({ builtRunner: '/app/out/main/sim-runner.cjs', execPath: '/Apps/exobar', inElectron: true, exists: () => true });
    expect(cmd).toEqual({ command: '/Apps/exobar', args: ['/app/out/main/sim-runner.cjs'], env: { ELECTRON_RUN_AS_NODE: '1' } });
  });

  it('reads the built runner from EXOBAR_SIM_RUNNER_JS', () => {
    const cmd = resolveSimRunnerCommand({ env: { EXOBAR_SIM_RUNNER_JS: '/x/sim-runner.cjs' }, inElectron: false, exists: (p) => p === '/x/sim-runner.cjs' });
    expect(cmd.args).toEqual(['/x/sim-runner.cjs']);
    expect(cmd.env).toEqual({});
  });

  it('takes the bundle beside the package when the named one is missing, and names the missing one when both are', () => {
    const beside = join(root, 'out/main/sim-runner.cjs');
    const named = { env: { EXOBAR_SIM_RUNNER_JS: '/no-build/main/sim-runner.cjs' }, inElectron: false };
    expect(resolveSimRunnerCommand({ ...named, exists: (p) => p === beside }).args).toEqual([beside]);
    expect(resolveSimRunnerCommand({ ...named, exists: () => false }).args).toEqual(['/no-build/main/sim-runner.cjs']);
  });

  it('otherwise runs the bundle the build writes beside the package, never the TypeScript source', () => {
    const cmd = resolveSimRunnerCommand({ env: {}, inElectron: false });
    expect(cmd).toEqual({ command: process.execPath, args: [join(root, 'out/main/sim-runner.cjs')], env: {} });
    expect(defaultSimRunnerPath()).toBe(join(root, 'out/main/sim-runner.cjs'));
  });

  it('the default command starts the built runner (the test setup builds it), which says hello', async () => {
    const cmd = resolveSimRunnerCommand({ env: {}, inElectron: false });
    expect(existsSync(cmd.args[0]!)).toBe(true);
    const hello = await helloOf(cmd);
    expect(hello).toMatchObject({ type: 'Hello', engine: 'sim', model: 'sim/llama-3.2-1b', fastSynch: false });
  });

  describe('with the bundle the build writes', () => {
    beforeAll(() => buildSimRunner(root, scratch), 120_000);

    it('the built command starts a real runner that says hello, with nothing else beside it', async () => {
      const built = join(scratch, SIM_RUNNER_BUNDLE);
      const cmd = resolveSimRunnerCommand({ builtRunner: built, inElectron: false });
      expect(cmd.args).toEqual([built]);
      const hello = await helloOf(cmd);
      expect(hello).toMatchObject({ type: 'Hello', engine: 'sim', model: 'sim/llama-3.2-1b', fastSynch: false });
    });
  });
});

describe('resolveMlxRunnerDir', () => {
  it('prefers the packaged resources directory, else the source tree', () => {
    expect(resolveMlxRunnerDir({ EXOBAR_MLX_RUNNER_DIR: '/Apps/exobar.app/Contents/Resources/runners/mlx' })).toBe(
      '/Apps/exobar.app/Contents/Resources/runners/mlx',
    );
    expect(resolveMlxRunnerDir({})).toBe(join(root, 'electron/runners/mlx'));
  });
});
