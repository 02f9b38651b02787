import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findVenvBasePython, pythonCandidates, readLoginShellPath, type FindPythonOptions, type PythonCandidate } from './find-python';
import type { RunCommand } from './run-command';

/** A Mac's file system as a set of paths; xcode-select answers as told. */
function mac(files: string[], opts: { developerTools: boolean; loginPath?: string | null }) {
  const commands: string[] = [];
  const run: RunCommand = async (command, args) => {
    commands.push([command, ...args].join(' '));
    if (command === '/usr/bin/xcode-select')
      return opts.developerTools
        ? { code: 0, stdout: '/Library/Developer/CommandLineTools\n', stderr: '' }
        : { code: 2, stdout: '', stderr: 'xcode-select: error: unable to get active developer directory' };
    return { code: null, stdout: '', stderr: '', error: 'ENOENT' };
  };
  let loginReads = 0;
  const options: FindPythonOptions = {
    platform: 'darwin',
    env: { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' },
    run,
    exists: (p) => files.includes(p),
    list: (dir) => [...new Set(files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1).split('/')[0]!))],
    realpath: (p) => p,
    loginPath: async () => {
      loginReads++;
      return opts.loginPath ?? null;
    },
  };
  return { options, commands, loginReads: () => loginReads };
}

async function all(options: FindPythonOptions): Promise<PythonCandidate[]> {
  const out: PythonCandidate[] = [];
  for await (const c of pythonCandidates(options)) out.push(c);
  return out;
}

describe('pythonCandidates (the app started from Finder: PATH is /usr/bin:/bin:/usr/sbin:/sbin)', () => {
  it('finds Homebrew, /usr/local/bin and the python.org framework (newest first), then the login shell PATH', async () => {
    const m = mac(
      [
        '/opt/homebrew/bin/python3',
        '/usr/local/bin/python3',
        '/Library/Frameworks/Python.framework/Versions/3.9/bin/python3',
        '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3',
        '/Users/me/.pyenv/shims/python3',
      ],
      { developerTools: false, loginPath: '/Users/me/.pyenv/shims:/opt/homebrew/bin:/usr/bin:/bin' },
    );
    const found = await all(m.options);
    expect(found).toEqual([
      { python: '/opt/homebrew/bin/python3', why: 'Homebrew' },
      { python: '/usr/local/bin/python3', why: 'Homebrew (Intel) or the python.org installer, in /usr/local/bin' },
      { python: '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3', why: 'the python.org installer (Python 3.12)' },
      { python: '/Library/Frameworks/Python.framework/Versions/3.9/bin/python3', why: 'the python.org installer (Python 3.9)' },
      { python: '/Users/me/.pyenv/shims/python3', why: "python3 on your login shell's PATH (/Users/me/.pyenv/shims)" },
    ]);
  });

  it('never runs /usr/bin/python3 without developer tools (it is the stub that opens an install dialog)', async () => {
    const m = mac(['/usr/bin/python3'], { developerTools: false });
    const skipped: string[] = [];
    expect(await all({ ...m.options, onSkip: (note) => skipped.push(note) })).toEqual([]);
    expect(m.commands).toEqual(['/usr/bin/xcode-select -p']);
    expect(skipped).toEqual([expect.stringContaining('/usr/bin/python3 was not tried: without the Command Line Tools')]);
  });

  it("tries Apple's python3 last when developer tools are installed", async () => {
    const m = mac(['/usr/bin/python3', '/opt/homebrew/bin/python3'], { developerTools: true });
    expect((await all(m.options)).map((c) => c.python)).toEqual(['/opt/homebrew/bin/python3', '/usr/bin/python3']);
  });

  it('reads the login shell only when the earlier candidates did not do, and each interpreter once', async () => {
    const m = mac(['/opt/homebrew/bin/python3'], { developerTools: false, loginPath: '/opt/homebrew/bin' });
    for await (const c of pythonCandidates(m.options)) {
      expect(c.python).toBe('/opt/homebrew/bin/python3');
      break; // it worked: nothing more is looked at
    }
    expect(m.loginReads()).toBe(0);
    expect((await all(m.options)).map((c) => c.python)).toEqual(['/opt/homebrew/bin/python3']);
  });

  it('in a terminal (exobar serve), python3 on PATH comes first', async () => {
    const m = mac(['/Users/me/.venvs/mlx/bin/python3', '/opt/homebrew/bin/python3'], { developerTools: false });
    const found = await all({ ...m.options, env: { PATH: '/Users/me/.venvs/mlx/bin:/opt/homebrew/bin:/usr/bin' } });
    expect(found[0]).toEqual({ python: '/Users/me/.venvs/mlx/bin/python3', why: 'python3 on PATH (/Users/me/.venvs/mlx/bin)' });
    expect(found).toHaveLength(2);
  });
});

describe('findVenvBasePython', () => {
  it('picks the first Python 3.10 or later, skipping an old one', async () => {
    const m = mac(['/usr/local/bin/python3', '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3'], { developerTools: false });
    const versions: Record<string, string> = { '/usr/local/bin/python3': '3.9.6', '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3': '3.12.4' };
    const run: RunCommand = async (command, args, opts) =>
      versions[command] ? { code: 0, stdout: `${versions[command]}\n`, stderr: '' } : m.options.run!(command, args, opts);
    expect(await findVenvBasePython({ ...m.options, run })).toEqual({
      python: '/Library/Frameworks/Python.framework/Versions/3.12/bin/python3',
      why: 'the python.org installer (Python 3.12)',
    });
    expect(await findVenvBasePython({ ...m.options, run, exists: (p) => p === '/usr/local/bin/python3' })).toBeNull();
  });
});

describe('readLoginShellPath with a real shell', () => {
  const dir = mkdtempSync(join(tmpdir(), 'exobar-shell-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads PATH as a login shell sets it, past whatever the profile prints', async () => {
    // A stand-in login shell whose profile greets and sets PATH, as ~/.zprofile with `brew shellenv` does.
    const shell = join(dir, 'fake-login-shell');
    writeFileSync(shell, '#!/bin/sh\necho "Welcome back"\nPATH=/opt/homebrew/bin:/usr/bin:/bin\nexport PATH\nshift\nexec /bin/sh -c "$2"\n');
    chmodSync(shell, 0o755);
    expect(await readLoginShellPath({ SHELL: shell, PATH: '/usr/bin:/bin' })).toBe('/opt/homebrew/bin:/usr/bin:/bin');
  });

  it('answers null when the shell gives nothing', async () => {
    expect(await readLoginShellPath({ SHELL: '/nonexistent/shell', PATH: '/usr/bin' })).toBeNull();
  });
});
