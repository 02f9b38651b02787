/**
 * The runner settings reach the runner: the node starts it with the setting's schedule
 * unless the launch asks another, with its prompt cache cap and (a sim) the timing
 * profile; the snapshot shows what the runner itself reported in its hello.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { eventually } from '../../../test/support/eventually';

let fixture: NodeFixture | null = null;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = null;
});

describe('runner engine options', () => {
  it("starts each runner with the setting's schedule or the launch's own, and the cache cap, as its hello reports", async () => {
    fixture = createNodeFixture({ runnerSettings: () => ({ schedule: 'exo', prefillChunkMs: 100, promptCacheBytes: 1_000_000 }) });
    const { node } = fixture;
    const asSet = await node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    const own = await node.createInstance({
      model: 'sim/llama-3.2-3b',
      instanceType: 'ring',
      fastSynch: 'auto',
      acknowledgeRisk: false,
      schedule: 'interleaved',
    });
    await node.waitForReady(asSet.id, 60_000);
    await node.waitForReady(own.id, 60_000);
    const engineOf = (id: string) => localInstances(node.snapshot()).find((i) => i.id === id)?.runnerEngine;
    expect(await eventually(() => engineOf(asSet.id)?.schedule)).toBe('exo');
    expect(engineOf(own.id)?.schedule).toBe('interleaved');
    expect(engineOf(asSet.id)?.promptCache).toMatchObject({ capBytes: 1_000_000, supported: true, reason: null, hits: 0, misses: 0 });
    expect(engineOf(asSet.id)?.simProfile).toBeNull();
  });

  it("starts sim runners with the setting's timing profile, as their hello reports", async () => {
    fixture = createNodeFixture({
      runnerSettings: () => ({ schedule: 'interleaved', prefillChunkMs: 250, promptCacheBytes: 0, simProfile: 'cpu-tiny' }),
    });
    const { node } = fixture;
    const created = await node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await node.waitForReady(created.id, 60_000);
    const engineOf = () => localInstances(node.snapshot()).find((i) => i.id === created.id)?.runnerEngine;
    expect(await eventually(() => engineOf()?.simProfile)).toBe('cpu-tiny');
  });
});
