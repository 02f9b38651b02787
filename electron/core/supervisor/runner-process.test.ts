/** RunnerProcess against real child processes: exit handled after all output, a truthful terminate. */
import { describe, expect, it } from 'vitest';
import type { RunnerOutput } from '../../../shared/runner-protocol';
import { LogTail } from '../process/log-tail';
import { RunnerProcess, type RunnerExit } from './runner-process';
import { sleep } from '../../../test/support/eventually';

function start(script: string) {
  const messages: RunnerOutput[] = [];
  let exitSeenAfter = -1;
  const exited = new Promise<RunnerExit>((resolve) => {
    const proc = new RunnerProcess(
      { command: process.execPath, args: ['-e', script], env: {} },
      { stdout: new LogTail({ filePath: null }), stderr: new LogTail({ filePath: null }) },
      {
        onMessage: (m) => messages.push(m),
        onMalformedLine: () => undefined,
        onExit: (exit) => {
          exitSeenAfter = messages.length;
          resolve(exit);
        },
      },
    );
    procs.push(proc);
  });
  return { messages, exited, exitSeenAfter: () => exitSeenAfter };
}
const procs: RunnerProcess[] = [];

describe('runner process', () => {
  it('reports the exit only once every line it wrote was read', async () => {
    // Many lines written right before exiting: with the exit handled on 'exit' instead of 'close', the last ones could come after it.
    const r = start(
      `for (let i = 0; i < 2000; i++) process.stdout.write(JSON.stringify({ type: 'TaskAcknowledged', taskId: 't' + i }) + '\\n'); process.exitCode = 3;`,
    );
    expect(await r.exited).toEqual({ code: 3, signal: null });
    expect(r.messages).toHaveLength(2000);
    expect(r.exitSeenAfter()).toBe(2000);
  });

  it('terminate: SIGTERM, then SIGKILL for a process that ignores it, and says it died', async () => {
    const r = start(`process.on('SIGTERM', () => {}); process.stdout.write('{"type":"TaskAcknowledged","taskId":"up"}\\n'); setInterval(() => {}, 1000);`);
    while (r.messages.length === 0) await sleep(10);
    const result = await procs.at(-1)!.terminate(200, 2000);
    expect(result).toEqual({ exit: { code: null, signal: 'SIGKILL' }, died: true });
  });

  it('handles the exit anyway when a process outside its group keeps its output open', async () => {
    const r = start(
      `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: ['ignore', 'inherit', 'ignore'] });` +
        `c.unref(); process.stdout.write(JSON.stringify({ type: 'TaskAcknowledged', taskId: String(c.pid) }) + '\\n'); process.exit(4);`,
    );
    expect(await r.exited).toEqual({ code: 4, signal: null });
    // Handled while the holder (alive for 30 s) still keeps the output open: the exit was
    // not waiting for the pipe to close, whatever the machine's speed.
    const holder = r.messages[0];
    expect(holder?.type).toBe('TaskAcknowledged');
    const holderPid = Number(holder?.type === 'TaskAcknowledged' ? holder.taskId : NaN);
    expect(() => process.kill(holderPid, 0)).not.toThrow();
    process.kill(holderPid, 'SIGKILL');
  });
});
