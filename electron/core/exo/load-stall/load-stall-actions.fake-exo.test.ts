/**
 * The way out of a load that stalled, through the whole core against the serving fake
 * exo: Place again (the same route and action as a lost model's) stops the stalled
 * instance and places the model again as it was, and the new one loads; Stop (the
 * instance's own Stop) deletes it. Either way the exo_load_stalled warning goes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../../shared/snapshot';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { FakeExoCluster, TINY, TINY_B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';

let exo: ServingExo | null = null;
let rig: CoreRig | null = null;
afterEach(async () => {
  await rig?.close();
  await exo?.close();
  rig = null;
  exo = null;
});

const stalled = (s: Snapshot) => s.warnings.filter((w) => w.code === 'exo_load_stalled');

/** Two Macs; TINY ready across both, TINY_B on studio-b stopped loading at its first layers. */
async function stalledRig(): Promise<{ exo: ServingExo; rig: CoreRig; stalledId: string }> {
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
  cluster.addNode({ name: 'studio-b', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
  cluster.addInstance({ model: TINY, nodes: ['studio-a', 'studio-b'], ready: true });
  const stuck = cluster.addInstance({ model: TINY_B, nodes: ['studio-b'] });
  cluster.step(4);
  cluster.stallLoading(TINY_B);
  exo = await startServingExo({ cluster });
  // The floor is the least the setting allows in seconds; here a moment, and every Mac taken as fast, so the test waits on the warning alone.
  rig = await startCoreRig({ exoUrl: exo.url, exo: { offerUrl: null, exoLogDir: null, monitor: { loadStall: () => ({ floorMs: 300, assumedBytesPerS: 1e15 }) } } });
  await eventually(() => stalled(rig!.node.snapshot()).length === 1, 15_000, 'exo_load_stalled for tiny-llama-b');
  return { exo, rig, stalledId: stuck.id };
}

describe('a stalled exo load, answered', () => {
  it('Place again stops the stalled instance and places the model again as it was; the new one loads and the warning goes', async () => {
    const { exo, rig, stalledId } = await stalledRig();
    const [warning] = stalled(rig.node.snapshot());
    expect(warning).toMatchObject({ model: TINY_B, instanceIds: [`exo:${TINY_B}`] });

    // exo's placement puts it on studio-a, beside tiny-llama's ring with fast synch assumed on: the gate asks first, and the stalled one stays.
    const refused = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY_B });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'fast_synch_shared_gpu']);
    expect(exo.cluster.instances.has(stalledId)).toBe(true);
    expect(stalled(rig.node.snapshot())).toHaveLength(1);

    const answer = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY_B, acknowledgeRisk: true });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ model: TINY_B, alreadyPlaced: false });
    expect(answer.body.nodes).toHaveLength(1);
    expect(answer.body.instanceId).not.toBe(stalledId);
    expect(exo.cluster.instances.has(stalledId)).toBe(false);

    // The new instance loads (the fake's placement steps it to Ready) and the warning goes with the stalled one.
    const ready = () => {
      const shards = exo.cluster.instances.get(answer.body.instanceId)?.shards ?? [];
      return shards.length > 0 && shards.every((s) => 'RunnerReady' in (exo.cluster.runners.get(s.runnerId) ?? {}));
    };
    await eventually(() => ready() && stalled(rig.node.snapshot()).length === 0, 15_000, 'tiny-llama-b placed again and ready, its warning gone');
    expect(rig.node.snapshot().instances.filter((i) => i.model === TINY_B)).toHaveLength(1);
    // exobar deleted the stalled one itself: no lost-model warning for it.
    expect(rig.node.snapshot().warnings.filter((w) => w.code === 'exo_model_lost')).toEqual([]);
  }, 40_000);

  it('Stop deletes the stalled instance and the warning goes; Place again then has nothing stalled to answer', async () => {
    const { exo, rig, stalledId } = await stalledRig();
    const stopped = await rig.control('DELETE', `/api/instances/${encodeURIComponent(`exo:${TINY_B}`)}`, { confirm: true });
    expect(stopped.status).toBe(200);
    expect(exo.cluster.instances.has(stalledId)).toBe(false);
    await eventually(() => stalled(rig.node.snapshot()).length === 0, 15_000, 'the warning gone after Stop');
    const again = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY_B });
    expect([again.status, again.body.error.code]).toEqual([404, 'model_not_found']);
    expect(again.body.error.message).toContain('nor one whose load stalled');
  }, 40_000);
});
