import { describe, expect, it } from 'vitest';
import { runCommand, streamCommand } from './run-command';

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
});
