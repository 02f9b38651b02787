/**
 * Two Macs reporting the same name (two exo nodes on one machine both did): runner
 * rows, the Macs list, warnings and events add a short node id to tell them apart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, FakeExoCluster, STOPPED_NODE_REMOVAL_MS, TINY, TINY_B } from '../../../../test/support/fake-exo';
import { shortNodeId } from './node-labels';

let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

function twoStudios(now: () => number): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio' });
  cluster.addNode({ name: 'studio' });
  const b = cluster.nodes[1]!;
  // The fake places instances by name: the second Mac goes by another name while they are placed.
  b.name = 'studio-tmp';
  cluster.addInstance({ model: TINY, nodes: ['studio', 'studio-tmp'], ready: true });
  cluster.addInstance({ model: TINY_B, nodes: ['studio-tmp'], ready: true });
  cluster.addInstance({ model: 'exobar/tiny-llama-c', nodes: ['studio-tmp'], ready: true });
  b.name = 'studio';
  return cluster;
}

describe('Macs that share a name', () => {
  it('are told apart by a short node id in rows, warnings and events', async () => {
    h = await attachToFake(twoStudios);
    await h.round(5_000);
    const [a, b] = h.cluster.nodes;
    const labelA = `studio (${shortNodeId(a!.id)})`;
    const labelB = `studio (${shortNodeId(b!.id)})`;
    let view = h.monitor.view();
    expect(view.section.nodes.map((n) => n.label).sort()).toEqual([labelA, labelB].sort());
    const ring = view.instances.find((i) => i.model === TINY)!;
    expect(ring.exo.runners.map((r) => [r.nodeName, r.nodeLabel, r.rank])).toEqual([
      ['studio', labelA, 0],
      ['studio', labelB, 1],
    ]);
    const shared = view.warnings.find((w) => w.code === 'two_ring_fast_synch')!;
    expect(shared.title).toContain(labelB);

    // What stopNode does, for the second of the two Macs named "studio" (stopNode finds Macs by name).
    b!.alive = false;
    b!.lastSeenAt = h.clock.now;
    b!.stoppedAt = h.clock.now;
    h.clock.now += STOPPED_NODE_REMOVAL_MS;
    h.cluster.step();
    await h.round(5_000);
    await h.round(5_000);
    view = h.monitor.view();
    const left = view.section.events.find((e) => e.kind === 'node_left')!;
    // Named as it was while both Macs were there.
    expect(left.nodes[0]!.label).toBe(labelB);
    expect(left.summary).toContain(labelB);
    const lost = view.warnings.filter((w) => w.code === 'exo_model_lost');
    expect(lost).toHaveLength(3);
    expect(lost[0]!.title).toContain(`${labelB} left at`);
  });
});
