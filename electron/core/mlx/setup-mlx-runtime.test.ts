import { describe, expect, it } from 'vitest';
import { mlxVenvPython } from './detect-mlx-runtime';
import type { RunCommand, StreamCommand } from './run-command';
import { MlxSetupError, setupMlxRuntime, type MlxSetupProgress } from './setup-mlx-runtime';

const venv = mlxVenvPython('/data');

interface Script {
  /** Output lines and exit code per command, keyed by its first pip/venv argument. */
  stream?: Record<string, { lines: string[]; code: number | null; error?: string }>;
  baseVersion?: string;
  installed?: boolean;
}

function fakes(script: Script = {}) {
  const commands: string[] = [];
  const run: RunCommand = async (command, args) => {
    commands.push([command, ...args.slice(0, 1)].join(' '));
    if (args[1]?.includes('import sys, venv')) return { code: 0, stdout: `${script.baseVersion ?? '3.12.4'}\n`, stderr: '' };
    // detectMlxRuntime's import check of the venv
    const ok = script.installed ?? true;
    const probe = { python: venv, pythonVersion: '3.12.4', ok, mlxLm: ok ? '0.32.2' : null, error: ok ? undefined : 'ModuleNotFoundError' };
    return { code: 0, stdout: JSON.stringify(probe), stderr: '' };
  };
  const stream: StreamCommand = async (command, args, { onLine }) => {
    commands.push([command, ...args].join(' '));
    const key = args.includes('venv') ? 'venv' : args.includes('pip') && args.at(-1) === 'pip' ? 'pip' : 'mlx-lm';
    const step = script.stream?.[key] ?? { lines: [`${key} ok`], code: 0 };
    for (const line of step.lines) onLine('stdout', line);
    return { code: step.code, error: step.error };
  };
  return { run, stream, commands };
}

async function setup(script: Script = {}, extra: Partial<Parameters<typeof setupMlxRuntime>[0]> = {}) {
  const f = fakes(script);
  const events: MlxSetupProgress[] = [];
  const promise = setupMlxRuntime({
    dataDir: '/data',
    onProgress: (p) => events.push(p),
    platform: 'darwin',
    arch: 'arm64',
    run: f.run,
    stream: f.stream,
    exists: () => false,
    findBasePython: async () => null,
    ...extra,
  });
  return { promise, events, commands: f.commands };
}

describe('setupMlxRuntime', () => {
  it('creates the venv, installs mlx-lm and verifies it, streaming every step and output line', async () => {
    const { promise, events, commands } = await setup({
      stream: { 'mlx-lm': { lines: ['Collecting mlx-lm==0.32.2', 'Successfully installed mlx-0.32.4 mlx-lm-0.32.2'], code: 0 } },
    });
    await expect(promise).resolves.toMatchObject({ available: true, python: venv, version: '0.32.2' });
    expect(commands).toEqual([
      'python3 -c',
      'python3 -m venv /data/mlx-venv',
      `${venv} -m pip install --upgrade --progress-bar off pip`,
      `${venv} -m pip install --upgrade --progress-bar off mlx==0.32.4 mlx-lm==0.32.2 llguidance==1.9.1`,
      `${venv} -c`,
    ]);
    expect([...new Set(events.map((e) => e.step))]).toEqual([
      'check-platform',
      'check-python',
      'create-venv',
      'upgrade-pip',
      'install-mlx-lm',
      'verify',
      'done',
    ]);
    expect(events.filter((e) => e.line !== undefined && e.step === 'install-mlx-lm').map((e) => e.line)).toEqual([
      'Collecting mlx-lm==0.32.2',
      'Successfully installed mlx-0.32.4 mlx-lm-0.32.2',
    ]);
  });

  it('without a Python in settings, creates the venv with the one found on the Mac (not a bare python3)', async () => {
    const { promise, commands } = await setup({}, { findBasePython: async () => '/opt/homebrew/bin/python3' });
    await promise;
    expect(commands.slice(0, 2)).toEqual(['/opt/homebrew/bin/python3 -c', '/opt/homebrew/bin/python3 -m venv /data/mlx-venv']);
  });

  it('reuses an existing venv and uses the Python from settings', async () => {
    const { promise, commands } = await setup({}, { basePython: '/opt/homebrew/bin/python3.12', exists: (p) => p === venv });
    await promise;
    expect(commands[0]).toBe('/opt/homebrew/bin/python3.12 -c');
    expect(commands.some((c) => c.includes('-m venv'))).toBe(false);
  });

  it('installs the CPU build on Linux, the same pinned versions', async () => {
    const { promise, commands } = await setup({}, { platform: 'linux', arch: 'x64' });
    await expect(promise).resolves.toMatchObject({ available: true, device: 'cpu' });
    expect(commands).toContain(`${venv} -m pip install --upgrade --progress-bar off mlx[cpu]==0.32.4 mlx-lm==0.32.2 llguidance==1.9.1`);
  });

  it('fails clearly where MLX does not run and with an old Python', async () => {
    const rosetta = await setup({}, { platform: 'darwin', arch: 'x64' });
    await expect(rosetta.promise).rejects.toMatchObject({ name: 'MlxSetupError', step: 'check-platform' });
    const windows = await setup({}, { platform: 'win32', arch: 'x64' });
    await expect(windows.promise).rejects.toThrow(/Apple silicon \(Metal\) or on Linux \(CPU\); this is win32\/x64/);
    const old = await setup({ baseVersion: '3.9.6' });
    await expect(old.promise).rejects.toThrow(/Python 3.9.6; mlx-lm needs Python 3.10 or later/);
  });

  it('names the step, the exit status and pip’s reason when pip fails', async () => {
    const lines = ['Collecting mlx-lm==0.32.2', "WARNING: Retrying after connection broken by 'NewConnectionError(...: Failed to establish a new connection')"];
    const { promise } = await setup({ stream: { 'mlx-lm': { lines, code: 1 } } });
    const error = (await promise.catch((e: unknown) => e)) as MlxSetupError;
    expect(error).toBeInstanceOf(MlxSetupError);
    expect(error.step).toBe('install-mlx-lm');
    expect(error.message).toMatch(/failed \(exit code 1\)\. pip could not reach the package index/);
    expect(error.outputTail).toEqual(lines);
  });

  it('fails the verify step when mlx-lm does not import after installing', async () => {
    const { promise } = await setup({ installed: false });
    await expect(promise).rejects.toMatchObject({ step: 'verify' });
  });

  it('reports a venv command that cannot start', async () => {
    const { promise } = await setup({ stream: { venv: { lines: [], code: null, error: 'timed out after 300000 ms' } } });
    await expect(promise).rejects.toThrow(/-m venv \/data\/mlx-venv failed \(timed out after 300000 ms\)/);
  });
});
