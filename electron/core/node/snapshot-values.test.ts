/**
 * Snapshots are values: reading is pure (same version, same object, nothing recorded),
 * and what the state change implies (a warning raised or cleared) is recorded when the
 * state changes, whether or not anyone reads or subscribes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isEventOf } from '../events/node-event';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';

let fixture: NodeFixture | null = null;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = null;
});

describe('node snapshots are values', () => {
  it('reading twice gives the same seq and the same object, and records nothing', async () => {
    fixture = createNodeFixture();
    await fixture.launch('sim/llama-3.2-1b');
    const { node } = fixture;
    const eventsBefore = node.recentEvents().length;
    const first = node.snapshot();
    const second = node.snapshot();
    expect(second.seq).toBe(first.seq);
    expect(second).toBe(first);
    expect(node.recentEvents()).toHaveLength(eventsBefore);
  });

  it('records a warning when the state changes, with no reader and no subscriber at all', async () => {
    fixture = createNodeFixture();
    const { node } = fixture;
    const a = await node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'on', acknowledgeRisk: true });
    const b = await node.createInstance({ model: 'sim/llama-3.2-3b', instanceType: 'ring', fastSynch: 'on', acknowledgeRisk: true });
    const raised = node.recentEvents().filter(isEventOf('warning_raised'));
    expect(raised.map((e) => e.data)).toEqual([{ code: 'two_ring_fast_synch', instanceIds: [a.id, b.id] }]);
    await node.deleteInstance(b.id);
    const cleared = node.recentEvents().filter(isEventOf('warning_cleared'));
    expect(cleared.map((e) => e.data)).toEqual([{ code: 'two_ring_fast_synch', instanceIds: [a.id, b.id] }]);
    // The snapshot, read only now, agrees with what was recorded.
    expect(node.snapshot().warnings).toEqual([]);
  });

  it('moves seq exactly when the state changes', async () => {
    fixture = createNodeFixture();
    const { node } = fixture;
    const before = node.snapshot().seq;
    node.countRejectedInput('http');
    const after = node.snapshot();
    expect(after.seq).toBeGreaterThan(before);
    expect(after.rejectedInputs).toEqual({ http: 1 });
  });
});
