/**
 * The last-resort kill reaches the runners alive now, read from the supervisors: a
 * runner still stopping (its instance listed as stopping until the runner exits) included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { instanceLifecycle, localInstances } from '../../../shared/instance-state';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { processAlive } from '../../../test/support/process-alive';
import { killRunnerGroups } from './kill-runner-groups';
import { eventually } from '../../../test/support/eventually';

let fixture: NodeFixture | null = null;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = null;
});

describe('kill runner groups from live pids', () => {
  it('lists the live runner, keeps listing it while it stops, and kills it', async () => {
    // The sim answers Shutdown at once: frozen with SIGSTOP, the runner stays in "stopping".
    fixture = createNodeFixture();
    const id = await fixture.launch('sim/llama-3.2-1b');
    const { node } = fixture;
    const pid = localInstances(node.snapshot())[0]!.runner.pid!;
    expect(node.runnerPids()).toEqual([pid]);

    process.kill(pid, 'SIGSTOP');
    const deleting = node.deleteInstance(id);
    // Stopping, still alive: listed as stopping in the snapshot and in the live pids.
    await eventually(() => node.snapshot().instances.some((i) => i.id === id && instanceLifecycle(i) === 'stopping'), 5_000, 'instance stopping');
    expect(processAlive(pid)).toBe(true);
    expect(node.runnerPids()).toEqual([pid]);

    expect(killRunnerGroups(node.runnerPids())).toBe(1);
    await deleting;
    await eventually(() => !processAlive(pid), 5_000, 'runner killed');
    expect(node.runnerPids()).toEqual([]);
    // Its runner gone, it has left the snapshot.
    expect(node.snapshot().instances).toEqual([]);
  });

  it('counts a pid that is already gone as not signalled', () => {
    const kills: number[] = [];
    const kill = (pid: number) => {
      kills.push(pid);
      throw new Error('ESRCH');
    };
    expect(killRunnerGroups([4242], kill)).toBe(0);
    expect(kills).toEqual([-4242, 4242]);
  });
});
