/** Leftover runners stopped for real: by pid and start time, never a process whose start time differs. */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../../test/support/process-alive';
import { killAll } from '../../../test/support/fake-exo-exe/harness';
import { stopLeftovers, wedgedReason } from './leftover-runners';
import { descendants, parseProcStat, parsePsTable, processStartTime } from './process-identity';
import { eventually } from '../../../test/support/eventually';

const spawned: number[] = [];
afterEach(() => killAll(spawned.splice(0)));

/** A node process; `ignoreTerm` makes it ignore SIGTERM. It prints "up" once its handlers are set. */
async function node(code: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', `${code}; console.log('up'); setInterval(() => {}, 60000)`], { stdio: ['ignore', 'pipe', 'ignore'] });
  spawned.push(child.pid!);
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return child.pid!;
}

const timing = { termGraceMs: 800, killWaitMs: 2000, pollMs: 50 };

describe('stopLeftovers', () => {
  it('stops a recorded process on SIGTERM, kills one that ignores it, and leaves alone a pid whose start time differs', async () => {
    const polite = await node('');
    const stubborn = await node("process.on('SIGTERM', () => {})");
    const bystander = await node('');
    const results = await stopLeftovers(
      [
        { pid: polite, startTime: (await processStartTime(polite))! },
        { pid: stubborn, startTime: (await processStartTime(stubborn))! },
        // The pid as if reused: recorded with another start time.
        { pid: bystander, startTime: 'not-its-start-time' },
        { pid: 2 ** 22 + 12345, startTime: '1' },
      ],
      timing,
    );
    expect(results.map((r) => r.outcome)).toEqual(['exited', 'killed', 'reused', 'gone']);
    expect(processAlive(polite)).toBe(false);
    expect(processAlive(stubborn)).toBe(false);
    expect(processAlive(bystander)).toBe(true);
    expect(wedgedReason(results)).toBe(
      `the GPU may be wedged: exo left runner pid ${stubborn} ignored SIGTERM and had to be killed (SIGKILL), which may not free the GPU. ` +
        'Check Activity Monitor for GPU use and memory held; reboot the Mac if it stays busy, then start exo again',
    );
  });

  it('says nothing is wedged when every runner stopped on SIGTERM, and names survivors', () => {
    expect(
      wedgedReason([
        { pid: 1, outcome: 'exited' },
        { pid: 2, outcome: 'gone' },
        { pid: 3, outcome: 'reused' },
      ]),
    ).toBeNull();
    expect(wedgedReason([{ pid: 7, outcome: 'survived' }])).toMatch(/runner pid 7 still alive after SIGKILL \(stuck in the kernel/);
  });
});

describe('process identity', () => {
  it('parses /proc stat lines whose name holds spaces and parentheses', () => {
    const line = '4242 (exo (runner) 1) S 4200 4200 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 987654 1000 10 0 0';
    expect(parseProcStat(line)).toEqual({ ppid: 4200, pgid: 4200, startTime: '987654', zombie: false });
  });

  it('parses macOS ps rows, start time as ps prints it, zombies left out', () => {
    const out = [
      '  501   1   501 Ss   Mon Nov 30 19:26:27 2026',
      ' 4242 501   501 S+   Mon Nov 30 19:27:01 2026',
      ' 4243 501   501 Z    Mon Nov 30 19:27:02 2026',
      '',
    ].join('\n');
    expect(parsePsTable(out)).toEqual([
      { pid: 501, ppid: 1, pgid: 501, startTime: 'Mon Nov 30 19:26:27 2026' },
      { pid: 4242, ppid: 501, pgid: 501, startTime: 'Mon Nov 30 19:27:01 2026' },
    ]);
  });

  it('finds grandchildren among the descendants', async () => {
    const parent = spawn(
      process.execPath,
      ['-e', "require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' }); setInterval(() => {}, 60000)"],
      { stdio: 'ignore' },
    );
    spawned.push(parent.pid!);
    await eventually(async () => (await descendants(parent.pid!)).length === 1, 10_000, 'the grandchild');
    const found = await descendants(parent.pid!);
    // Seen from the test process, the grandchild is a descendant too.
    expect((await descendants(process.pid)).map((d) => d.pid)).toEqual(expect.arrayContaining([parent.pid, found[0]!.pid]));
    expect(found).toHaveLength(1);
    spawned.push(found[0]!.pid);
    expect(found[0]!.startTime).toBe(await processStartTime(found[0]!.pid));
  });
});
