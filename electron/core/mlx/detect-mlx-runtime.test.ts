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
/** A Mac's files (`find` stands in for the file system), started from Finder: the system PATH. */
const onMac = (files: string[], loginPath: string | null = null) => ({
  exists: (p: string) => files.includes(p),
  list: () => [],
  realpath: (p: string) => p,
  loginPath: async () => loginPath,
});
const SYSTEM_PATH = { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' };
const mac = { platform: 'darwin' as const, arch: 'arm64', dataDir: '/data', env: SYSTEM_PATH, find: onMac([]) };

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

  it('finds MLX on Linux too, on the CPU, with /usr/bin searched like any PATH entry', async () => {
    const run = fakeRun({ '/usr/bin/python3': good('/usr/bin/python3') });
    const find = { ...onMac(['/usr/bin/python3']), exists: (p: string) => p === '/usr/bin/python3' };
    const status = await detectMlxRuntime({ platform: 'linux', arch: 'x64', dataDir: '/data', run, env: { PATH: '/usr/bin:/bin' }, find });
    expect(status).toMatchObject({ available: true, device: 'cpu' });
    expect(status.reason).toMatch(/\(CPU\)$/);
  });

  it('prefers the venv in the data directory, then the Python it finds on the Mac, and says which and why', async () => {
    const venv = mlxVenvPython('/data');
    expect(venv).toBe('/data/mlx-venv/bin/python3');
    const brew = '/opt/homebrew/bin/python3';
    const run = fakeRun({ [venv]: good(venv), [brew]: good('/opt/homebrew/opt/python@3.12/bin/python3.12') });
    const withVenv = await detectMlxRuntime({ ...mac, run, find: onMac([venv, brew]) });
    expect(withVenv).toMatchObject({ available: true, python: venv, version: '0.32.2' });
    expect(withVenv.reason).toBe(`mlx-lm 0.32.2 found in ${venv}, chosen as the venv "Set up MLX runtime" made (Metal)`);
    const status = await detectMlxRuntime({ ...mac, run, find: onMac([brew]) });
    expect(status).toMatchObject({ available: true, python: '/opt/homebrew/opt/python@3.12/bin/python3.12' });
    expect(status.reason).toBe('mlx-lm 0.32.2 found in /opt/homebrew/opt/python@3.12/bin/python3.12 via /opt/homebrew/bin/python3, chosen as Homebrew (Metal)');
    expect(status.candidates).toEqual([{ python: brew, why: 'Homebrew', problem: null }]);
  });

  it("started from Finder (system PATH): finds Homebrew's Python, and never runs python3 or /usr/bin/python3 without developer tools", async () => {
    const brew = '/opt/homebrew/bin/python3';
    const run = fakeRun({ [brew]: good(brew), python3: good('/usr/bin/python3'), '/usr/bin/python3': good('/usr/bin/python3') });
    const xcodeSelect = Object.assign(
      (async (command, args, options) =>
        command === '/usr/bin/xcode-select' ? { code: 2, stdout: '', stderr: 'no developer tools' } : run(command, args, options)) as RunCommand,
      { calls: run.calls },
    );
    const status = await detectMlxRuntime({ ...mac, run: xcodeSelect, find: onMac(['/usr/bin/python3', brew]) });
    expect(status).toMatchObject({ available: true, python: brew });
    expect(status.reason).toContain('chosen as Homebrew');
    expect(run.calls).toEqual([brew]);

    const none = await detectMlxRuntime({ ...mac, run: xcodeSelect, find: onMac(['/usr/bin/python3']) });
    expect(none.available).toBe(false);
    expect(none.reason).toContain('/usr/bin/python3 was not tried: without the Command Line Tools');
    expect(run.calls).toEqual([brew]);
  });

  it("finds a Python on the login shell's PATH (pyenv, conda) when nothing else has mlx-lm", async () => {
    const shim = '/Users/me/.pyenv/shims/python3';
    const run = fakeRun({ [shim]: good('/Users/me/.pyenv/versions/3.12.4/bin/python3') });
    const status = await detectMlxRuntime({ ...mac, run, find: onMac([shim], '/Users/me/.pyenv/shims:/usr/bin:/bin') });
    expect(status.reason).toContain("chosen as python3 on your login shell's PATH (/Users/me/.pyenv/shims)");
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
      '/usr/local/bin/python3': good('/usr/local/bin/python3', '0.30.1'),
    });
    const status = await detectMlxRuntime({ ...mac, run, find: onMac([mlxVenvPython('/data'), '/usr/local/bin/python3']) });
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
