import { describe, expect, it } from 'vitest';
import { compareVersions, detectMlxRuntime, mlxVenvPython } from './detect-mlx-runtime';
import type { CommandResult, RunCommand } from './run-command';

/** A fake interpreter table: python path -> what its import check prints. */
function fakeRun(table: Record<string, CommandResult | object>): RunCommand & { calls: string[] } {
  const calls: string[] = [];
  const run: RunCommand = async (command, args) => {
    calls.push(command);
    expect(args[0]).toBe('-c');
    const entry = table[command];
    if (entry === undefined) return { code: null, stdout: '', stderr: '', error: 'ENOENT' };
    if ('code' in entry) return entry as CommandResult;
    return { code: 0, stdout: `${JSON.stringify(entry)}\n`, stderr: '' };
  };
  return Object.assign(run, { calls });
}

const good = (python: string, mlxLm = '0.32.2') => ({ python, pythonVersion: '3.12.4', ok: true, mlx: '0.32.4', mlxLm });
const mac = { platform: 'darwin' as const, arch: 'arm64', dataDir: '/data' };

describe('detectMlxRuntime', () => {
  it('is unavailable where MLX does not run, without running anything', async () => {
    const run = fakeRun({});
    const windows = await detectMlxRuntime({ platform: 'win32', arch: 'x64', dataDir: '/data', run });
    expect(windows).toMatchObject({ available: false, python: null, device: null });
    expect(windows.reason).toMatch(/macOS with Apple silicon \(Metal\) or on Linux \(CPU\); this is win32\/x64/);
    const rosetta = await detectMlxRuntime({ platform: 'darwin', arch: 'x64', dataDir: '/data', run });
    expect(rosetta.reason).toMatch(/Rosetta/);
    expect(run.calls).toEqual([]);
  });

  it('finds MLX on Linux too, on the CPU', async () => {
    const run = fakeRun({ python3: good('/usr/bin/python3') });
    const status = await detectMlxRuntime({ platform: 'linux', arch: 'x64', dataDir: '/data', run });
    expect(status).toMatchObject({ available: true, device: 'cpu' });
    expect(status.reason).toMatch(/\(CPU\)$/);
  });

  it('prefers the venv in the data directory, then python3 on PATH', async () => {
    const venv = mlxVenvPython('/data');
    expect(venv).toBe('/data/mlx-venv/bin/python3');
    const run = fakeRun({ [venv]: good('/data/mlx-venv/bin/python3'), python3: good('/usr/bin/python3') });
    expect(await detectMlxRuntime({ ...mac, run })).toMatchObject({ available: true, python: venv, version: '0.32.2' });
    const noVenv = fakeRun({ python3: good('/opt/homebrew/bin/python3') });
    const status = await detectMlxRuntime({ ...mac, run: noVenv });
    expect(status).toMatchObject({ available: true, python: '/opt/homebrew/bin/python3' });
    expect(status.candidates).toEqual([
      { python: venv, problem: 'could not run it (ENOENT)' },
      { python: 'python3', problem: null },
    ]);
  });

  it('uses only the settings path when one is set, and says why it fails', async () => {
    const run = fakeRun({
      '/custom/python': { python: '/custom/python', pythonVersion: '3.11.0', ok: false, error: "ModuleNotFoundError: No module named 'mlx'" },
      python3: good('/usr/bin/python3'),
    });
    const status = await detectMlxRuntime({ ...mac, settingsPython: '/custom/python', run });
    expect(status.available).toBe(false);
    expect(status.reason).toContain('The Python set in settings (/custom/python)');
    expect(status.reason).toContain("No module named 'mlx'");
    expect(run.calls).toEqual(['/custom/python']);
  });

  it('rejects an old Python, an old mlx-lm and garbage output', async () => {
    const run = fakeRun({
      [mlxVenvPython('/data')]: { python: 'x', pythonVersion: '3.9.6', ok: true, mlxLm: '0.32.0' },
      python3: good('/usr/bin/python3', '0.30.1'),
    });
    const status = await detectMlxRuntime({ ...mac, run });
    expect(status.available).toBe(false);
    expect(status.candidates.map((c) => c.problem)).toEqual([
      'Python 3.9.6 is too old (the runner needs 3.10.0 or later)',
      'mlx-lm 0.30.1 is too old (the runner supports 0.32.0 up to, not including, 0.33.0)',
    ]);
    const newer = await detectMlxRuntime({ ...mac, settingsPython: 'python3', run: fakeRun({ python3: good('/usr/bin/python3', '0.33.0') }) });
    expect(newer.reason).toMatch(/mlx-lm 0.33.0 is newer than the runner supports/);
    expect(status.reason).toMatch(/Set up MLX runtime/);
    const garbage = fakeRun({ python3: { code: 1, stdout: 'hello', stderr: 'SyntaxError: bad' } });
    const g = await detectMlxRuntime({ ...mac, settingsPython: 'python3', run: garbage });
    expect(g.reason).toContain('not a working Python (exit 1: SyntaxError: bad)');
  });

  it('compares versions numerically', () => {
    expect(compareVersions('0.30.10', '0.30.4')).toBeGreaterThan(0);
    expect(compareVersions('0.30', '0.30.0')).toBe(0);
    expect(compareVersions('0.29.9', '0.30.0')).toBeLessThan(0);
  });
});

describe('detectMlxRuntime with a real interpreter', () => {
  it('runs the import check in python3 and reports what is missing', async () => {
    // Pretend to be a Mac so the real probe runs; on this machine mlx is not installed.
    const status = await detectMlxRuntime({ platform: 'darwin', arch: 'arm64', dataDir: '/nonexistent', settingsPython: 'python3' });
    if (status.available) return; // a machine with mlx-lm: nothing missing to report
    expect(status.candidates).toHaveLength(1);
    expect(status.candidates[0]!.problem).toMatch(/mlx-lm is not importable \(ModuleNotFoundError|too old|could not run/);
  });
});
