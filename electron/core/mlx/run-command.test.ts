import { describe, expect, it } from 'vitest';
import { eventually } from '../../../test/support/eventually';
import { runCommand, runningCommandCount, stopRunningCommands, streamCommand } from './run-command';

/** True while a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A shell that starts a grandchild (as a login shell starts `pyenv rehash`), says its pid and waits on it. */
const SHELL_WITH_GRANDCHILD = ['-c', 'sleep 60 & echo $!; wait'];

describe('run-command (real child processes)', () => {
  it('captures output and exit codes, and reports a command that cannot start', async () => {
    const ok = await runCommand('python3', ['-c', 'import sys; print("out"); print("err", file=sys.stderr); sys.exit(3)'], { timeoutMs: 20_000 });
    expect(ok).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n' });
    const missing = await runCommand('/nonexistent/python', [], { timeoutMs: 5000 });
    expect(missing).toMatchObject({ code: null, error: 'ENOENT' });
  });

  it('streams lines from both outputs as they come, and times out', async () => {
    const lines: string[] = [];
    const result = await streamCommand('python3', ['-c', 'import sys; print("a"); print("b", file=sys.stderr); print("c")'], {
      timeoutMs: 20_000,
      onLine: (stream, line) => lines.push(`${stream}:${line}`),
    });
    expect(result).toEqual({ code: 0 });
    expect(lines.filter((l) => l.startsWith('stdout'))).toEqual(['stdout:a', 'stdout:c']);
    expect(lines).toContain('stderr:b');
    const slow = await streamCommand('python3', ['-c', 'import time; time.sleep(30)'], { timeoutMs: 300, onLine: () => {} });
    expect(slow).toEqual({ code: null, error: 'timed out after 300 ms' });
    const missing = await streamCommand('/nonexistent/python', [], { timeoutMs: 5000, onLine: () => {} });
    expect(missing).toEqual({ code: null, error: 'ENOENT' });
  });

  it('a timeout ends the command with what it started', async () => {
    const result = await runCommand('sh', SHELL_WITH_GRANDCHILD, { timeoutMs: 500 });
    expect(result).toMatchObject({ code: null, error: 'timed out after 500 ms' });
    const grandchild = Number(result.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    await eventually(() => !alive(grandchild), 10_000, 'the grandchild to be gone');
  });

  it('stopRunningCommands ends every running helper with what it started (the core stop calls it)', async () => {
    const lines: string[] = [];
    const streamed = streamCommand('sh', SHELL_WITH_GRANDCHILD, { timeoutMs: 60_000, onLine: (_stream, line) => lines.push(line) });
    await eventually(() => lines.length > 0, 10_000, 'the shell to say its grandchild');
    const grandchild = Number(lines[0]);
    expect(runningCommandCount()).toBe(1);
    stopRunningCommands();
    expect(await streamed).toEqual({ code: null, error: 'killed by SIGKILL' });
    expect(runningCommandCount()).toBe(0);
    await eventually(() => !alive(grandchild), 10_000, 'the grandchild to be gone');
  });
});
