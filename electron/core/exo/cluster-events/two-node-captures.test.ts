import { afterEach, describe, expect, it } from 'vitest';
import { ExoSectionSchema } from '../../../../shared/exo-snapshot';
import {
  AFTER_STUDIO_A,
  RING_IDS,
  TWO_NODE,
  afterInRingRun,
  readCapture,
  ringWithSecondModel,
  startCaptureExo,
  type CaptureExo,
} from '../../../../test/support/capture-exo';
import { ExoMonitor } from '../attach/exo-monitor';
import { clockTime } from './event-words';

let exo: CaptureExo | null = null;
let monitor: ExoMonitor | null = null;
afterEach(async () => {
  await monitor?.stop();
  await exo?.close();
  monitor = exo = null;
});

/** The after capture's lastSeen of studio-a: about 12 s after studio-b's exo was stopped. */
const AFTER_AT = Date.parse('2026-12-01T15:26:32.473Z');

async function attach(state: Record<string, unknown>, nodeId: string, clock: { now: number }) {
  exo = await startCaptureExo(state, nodeId);
  monitor = new ExoMonitor({ url: exo.url, now: () => clock.now, exoLogPath: null });
  await monitor.tick();
  return monitor;
}

describe('the two-node ring captures', () => {
  it.each([TWO_NODE.ringA, TWO_NODE.ringB])('show one runner row per Mac with its rank (%s)', async (name) => {
    const clock = { now: AFTER_AT - 60_000 };
    const view = (await attach(readCapture(name), RING_IDS.studioA, clock)).view();
    expect(view.section.nodes.map((n) => n.name)).toEqual(['studio-a', 'studio-b']);
    expect(view.instances).toHaveLength(1);
    const ring = view.instances[0]!;
    expect(ring).toMatchObject({ model: 'exobar/tiny-llama', instanceType: 'ring' });
    expect(ring.exo.sharding).toBe('Pipeline');
    expect(ring.exo.runners.map((r) => [r.nodeName, r.rank, r.status])).toEqual([
      ['studio-a', 0, 'RunnerReady'],
      ['studio-b', 1, 'RunnerReady'],
    ]);
    expect(view.section.events).toEqual([]);
  });

  it('the state after studio-b left, following the ring, gives studio-b left and both models deleted by exo after it', async () => {
    const clock = { now: AFTER_AT - 14_000 };
    const m = await attach(ringWithSecondModel(), RING_IDS.studioA, clock);
    expect(m.view().instances.map((i) => i.model)).toEqual(['exobar/tiny-llama', 'exobar/tiny-llama-b']);
    clock.now = AFTER_AT;
    exo!.show(afterInRingRun(), RING_IDS.studioA);
    await m.tick();
    const view = m.view();
    expect(view.instances).toEqual([]);
    const events = view.section.events;
    expect(events.map((e) => [e.kind, e.model, e.cause])).toEqual([
      ['node_left', null, null],
      ['instance_deleted', 'exobar/tiny-llama', 'node_left'],
      ['instance_deleted', 'exobar/tiny-llama-b', 'node_left'],
    ]);
    const left = events[0]!;
    expect(left.nodes).toEqual([{ nodeId: RING_IDS.studioB, name: 'studio-b', label: 'studio-b', lastSeenAt: Date.parse('2026-12-01T15:24:29.402Z') }]);
    expect(left).toMatchObject({ loss: true, at: AFTER_AT });
    expect(left.summary).toBe(`studio-b left the cluster (last seen ${clockTime(left.nodes[0]!.lastSeenAt!, true)})`);
    const [ring, second] = [events[1]!, events[2]!];
    expect(ring.nodes.map((n) => n.label)).toEqual(['studio-a', 'studio-b']);
    expect(ring).toMatchObject({ causeNodes: ['studio-b'], loss: true });
    expect(ring.summary).toBe(`tiny-llama deleted by exo after studio-b left at ${clockTime(AFTER_AT)} (it ran on studio-a and studio-b)`);
    expect(second.nodes.map((n) => n.label)).toEqual(['studio-b']);
    expect(events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    expect(() => ExoSectionSchema.parse(view.section)).not.toThrow();
    expect(m.bundleMaterial().events).toEqual(events);
    const lost = view.warnings.filter((w) => w.code === 'exo_model_lost');
    expect(lost.map((w) => [w.model, w.title])).toEqual([
      ['exobar/tiny-llama', `tiny-llama was lost: studio-b left at ${clockTime(AFTER_AT)}`],
      ['exobar/tiny-llama-b', `tiny-llama-b was lost: studio-b left at ${clockTime(AFTER_AT)}`],
    ]);
    expect(lost[0]!.risk).toContain('ran on studio-a and studio-b');
    expect(lost[1]!.risk).toContain('ran on studio-b,');
  });

  it("read as captured (two runs), studio-a's new id reads as exo restarted there, and the ring as deleted by exo after studio-b left", async () => {
    const clock = { now: AFTER_AT - 14_000 };
    const m = await attach(readCapture(TWO_NODE.ringA), RING_IDS.studioA, clock);
    clock.now = AFTER_AT;
    exo!.show(readCapture(TWO_NODE.afterBLeft), AFTER_STUDIO_A);
    await m.tick();
    const events = m.view().section.events;
    expect(events.map((e) => [e.kind, e.nodes.map((n) => n.nodeId), e.cause])).toEqual([
      ['exo_restarted', [AFTER_STUDIO_A], null],
      ['node_left', [RING_IDS.studioB], null],
      ['instance_deleted', [RING_IDS.studioA, RING_IDS.studioB], 'node_left'],
    ]);
    expect(events[2]!.causeNodes).toEqual(['studio-b']);
  });
});
