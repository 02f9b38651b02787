/**
 * Orphans: a runner left behind by an exobar that crashed is stopped at the next start,
 * by pid and start time; a pid that now belongs to another process is left alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../process/process-identity';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { RUNNER_REGISTRY_FILE } from './runner-registry';
import { eventually, sleep } from '../../../test/support/eventually';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('runner registry', () => {
  let fixture: NodeFixture | undefined;
  const spawned: number[] = [];
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
    for (const pid of spawned.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('records each runner while it runs, and forgets it when it exits', async () => {
    fixture = createNodeFixture();
    const id = await fixture.launch('sim/llama-3.2-1b');
    const file = join(fixture.dataDir, RUNNER_REGISTRY_FILE);
    const recorded = () => (JSON.parse(readFileSync(file, 'utf8')) as { runners: Array<{ pid: number; startTime: string; instanceId: string }> }).runners;
    await eventually(() => recorded().length === 1, 5000, 'the runner recorded');
    const [entry] = recorded();
    expect(entry!.instanceId).toBe(id);
    expect(entry!.startTime).toBe(await processStartTime(entry!.pid));
    await fixture.node.deleteInstance(id);
    await eventually(() => recorded().length === 0, 5000, 'the runner forgotten');
  });

  it('at start, stops a recorded runner that still runs with the same start time, and never a pid whose start time differs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-orphans-'));
    const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    orphan.unref();
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    bystander.unref();
    spawned.push(orphan.pid!, bystander.pid!);
    const runners = [
      { pid: orphan.pid!, startTime: (await processStartTime(orphan.pid!))!, instanceId: 'old-1' },
      // The same pid as a runner once had, but another process now: another start time.
      { pid: bystander.pid!, startTime: 'not its start time', instanceId: 'old-2' },
    ];
    writeFileSync(join(dataDir, RUNNER_REGISTRY_FILE), JSON.stringify({ runners }));
    try {
      fixture = createNodeFixture({ dataDir });
      await eventually(() => !alive(orphan.pid!), 5000, 'the orphan stopped');
      expect(alive(bystander.pid!)).toBe(true);
      await eventually(() => fixture!.node.recentEvents().filter((e) => e.kind === 'runner_orphan').length === 2, 5000, 'both reported');
      const outcomes = fixture.node.recentEvents().flatMap((e) => (e.kind === 'runner_orphan' ? [[e.data.pid, e.data.outcome]] : []));
      expect(outcomes).toEqual(
        expect.arrayContaining([
          [orphan.pid, 'exited'],
          [bystander.pid, 'reused'],
        ]),
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('leaves the runners and the file alone while the exobar that recorded them still runs (one data directory, two exobars)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-orphans-'));
    const owner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    const runner = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    owner.unref();
    runner.unref();
    spawned.push(owner.pid!, runner.pid!);
    const identity = async (pid: number) => ({ pid, startTime: (await processStartTime(pid))! });
    const file = JSON.stringify({ owner: await identity(owner.pid!), runners: [{ ...(await identity(runner.pid!)), instanceId: 'theirs' }] });
    writeFileSync(join(dataDir, RUNNER_REGISTRY_FILE), file);
    try {
      fixture = createNodeFixture({ dataDir });
      await sleep(500);
      expect(alive(runner.pid!)).toBe(true);
      expect(fixture.node.recentEvents().filter((e) => e.kind === 'runner_orphan')).toEqual([]);
      // A runner of its own, started and stopped: the owner's record is not rewritten.
      await fixture.node.deleteInstance(await fixture.launch('sim/llama-3.2-1b'));
      expect(readFileSync(join(dataDir, RUNNER_REGISTRY_FILE), 'utf8')).toBe(file);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
