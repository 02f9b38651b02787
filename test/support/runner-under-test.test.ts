import { describe, expect, it } from 'vitest';
import { useRunnerProcessCleanup } from './runner-cleanup';
import { killAllRunnerProcesses, spawnRunner } from './runner-under-test';
import { processAlive } from './process-alive';

useRunnerProcessCleanup();

/** A fake runner: prints a hello, echoes each stdin line's taskId as an ack, and starts a grandchild that sleeps. */
const FAKE_RUNNER = `
const { spawn } = require('node:child_process');
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
console.log(JSON.stringify({ type: 'Hello', protocolVersion: 1, engine: 'test', model: 'fake', pid: process.pid,
  env: { MLX_METAL_FAST_SYNCH: null, EXO_FAST_SYNCH: null }, fastSynch: false }));
console.error('grandchild=' + grandchild.pid);
console.log('this is not json');
console.error('fake runner log');
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  console.log(JSON.stringify({ type: 'TaskAcknowledged', taskId: JSON.parse(line).taskId }));
  if (JSON.parse(line).kind === 'Shutdown') process.exit(3);
});
`;

function fakeRunner() {
  return spawnRunner({ command: process.execPath, args: ['-e', FAKE_RUNNER], env: { ...process.env } });
}

describe('RunnerProcess', () => {
  it('parses stdout, keeps bad lines and stderr, and waits for messages and the exit', async () => {
    const runner = fakeRunner();
    const hello = await runner.waitFor((m) => m.type === 'Hello', 10_000);
    expect(hello.index).toBe(0);
    runner.send({ kind: 'LoadModel', taskId: 'load-1' });
    const ack = await runner.waitFor((m) => m.type === 'TaskAcknowledged', 10_000, { from: 1 });
    expect(ack.message).toEqual({ type: 'TaskAcknowledged', taskId: 'load-1' });
    expect(runner.badLines.map((b) => b.line)).toEqual(['this is not json']);
    // stderr is its own pipe: its lines may arrive after later stdout lines.
    await expect.poll(() => runner.stderr, { timeout: 5000 }).toContain('fake runner log');
    runner.send({ kind: 'Shutdown', taskId: 'bye' });
    expect(await runner.waitForExit(10_000)).toEqual({ code: 3, signal: null });
    // The grandchild outlived its runner: the cleanup still stops it (its group remains).
    const grandchild = Number(/grandchild=(\d+)/.exec(runner.stderr)?.[1]);
    expect(processAlive(grandchild)).toBe(true);
    await killAllRunnerProcesses();
    await expect.poll(() => processAlive(grandchild), { timeout: 2000 }).toBe(false);
  });

  it('rejects a wait with the runner output when nothing matches in time', async () => {
    const runner = fakeRunner();
    await runner.waitFor((m) => m.type === 'Hello', 10_000);
    await expect(runner.waitFor((m) => m.type === 'RunnerStatusUpdated', 300, { description: 'a status' })).rejects.toThrow(
      /timed out after 300 ms waiting for a status[\s\S]*Hello/,
    );
  });

  it('kills the whole process group, grandchildren included', async () => {
    const runner = fakeRunner();
    await runner.waitFor((m) => m.type === 'Hello', 10_000);
    await expect.poll(() => /grandchild=(\d+)/.test(runner.stderr)).toBe(true);
    const grandchild = Number(/grandchild=(\d+)/.exec(runner.stderr)?.[1]);
    expect(processAlive(grandchild)).toBe(true);
    await killAllRunnerProcesses();
    expect(runner.exit).toEqual({ code: null, signal: 'SIGKILL' });
    await expect.poll(() => processAlive(grandchild), { timeout: 2000 }).toBe(false);
  });
});
