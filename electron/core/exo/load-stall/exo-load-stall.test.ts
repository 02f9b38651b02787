/**
 * Loads that never end, against the fake exo (which can stop an instance's load where it
 * is, as exo's runners sometimes do now that exo has no load timeout): exobar warns
 * exo_load_stalled naming the model, the Mac, the phase and the layers done once nothing
 * moved for longer than the threshold, which grows with the model's size over the Mac's
 * measured load speed; a load that moves again clears it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { attachToFake, type AttachHarness, FakeExoCluster, QWEN_30B, startFakeDownload } from '../../../../test/support/fake-exo';
import { diagnoseExo } from '../../diagnostics/exo-diagnosis';

const GB = 1e9;
let h: AttachHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

function oneMac(now: () => number): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', ramGb: 256 });
  return cluster;
}

const stalled = (harness: AttachHarness) => harness.monitor.view().warnings.filter((w) => w.code === 'exo_load_stalled');

/** Places the model and lets its runners load `steps` steps of `stepMs` each (4 layers a step once loading). */
async function loadFor(harness: AttachHarness, steps: number, stepMs: number): Promise<void> {
  for (let i = 0; i < steps; i++) {
    harness.clock.now += stepMs;
    harness.cluster.step();
    await harness.round(0);
  }
}

describe('an exo load that stops moving', () => {
  it('is warned about with the model, the Mac, the phase and the layers, after the floor on a fast Mac, and cleared once it moves', async () => {
    h = await attachToFake(oneMac, { loadStall: () => ({ floorMs: 10_000 }) });
    startFakeDownload(h.cluster, 'studio-a', QWEN_30B, 17 * GB).complete();
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'] });
    // Idle → Connecting → Connected → Loading 0 → 4 → 8 → 12 layers, a second a step: about 1.4 GB/s.
    await loadFor(h, 6, 1000);
    const runner = h.monitor.view().instances[0]!.exo.runners[0]!;
    expect([runner.status, runner.layersLoaded]).toEqual(['RunnerLoading', 12]);
    h.cluster.stallLoading(QWEN_30B);

    await loadFor(h, 9, 1000);
    expect(stalled(h)).toEqual([]);
    await loadFor(h, 2, 1000);
    const [warning] = stalled(h);
    expect(warning?.title).toBe('Qwen3-30B-A3B-4bit on studio-a has not moved for 11 s while loading, 12 of 48 layers loaded');
    expect(warning?.risk).toMatch(/^exo has no load timeout \(removed in exo PR #1889\): a runner can stay RunnerLoading for ever/);
    expect(warning?.risk).toMatch(/Threshold 10 s, from the model's size and studio-a's load speed \(\d+ MB\/s as measured\)/);
    expect(warning?.fix).toMatch(/^Stop it \(delete the instance: Stop in exobar, or DELETE \/instance\/[0-9a-f-]+ on exo\) and place it again/);
    expect(warning?.model).toBe(QWEN_30B);

    // exo moves again (a layer more): the warning goes.
    h.cluster.resumeLoading(QWEN_30B);
    await loadFor(h, 1, 1000);
    expect(stalled(h)).toEqual([]);
  });

  it('waits longer on a Mac that loads slowly: the threshold is the model size over the measured speed, times five', async () => {
    h = await attachToFake(oneMac, { loadStall: () => ({ floorMs: 10_000 }) });
    startFakeDownload(h.cluster, 'studio-a', QWEN_30B, 17 * GB).complete();
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'] });
    // 4 layers of a 17 GB, 48-layer model every 60 s: about 24 MB/s, 15 s a layer, so 75 s without a layer is a stall.
    await loadFor(h, 6, 60_000);
    h.cluster.stallLoading(QWEN_30B);
    await loadFor(h, 7, 10_000);
    expect(stalled(h)).toEqual([]);
    await loadFor(h, 1, 10_000);
    const [warning] = stalled(h);
    expect(warning?.title).toBe('Qwen3-30B-A3B-4bit on studio-a has not moved for 80 s while loading, 12 of 48 layers loaded');
    expect(warning?.risk).toContain("Threshold 75 s, from the model's size and studio-a's load speed (24 MB/s as measured)");
  });

  it('says a runner stuck connecting, and the diagnosis names it', async () => {
    // A Mac not measured yet is taken at the assumed speed: so fast here that the floor alone decides.
    h = await attachToFake(oneMac, { loadStall: () => ({ floorMs: 10_000, assumedBytesPerS: 1e15 }) });
    h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'] });
    await loadFor(h, 1, 1000);
    expect(h.monitor.view().instances[0]!.exo.runners[0]!.status).toBe('RunnerConnecting');
    h.cluster.stallLoading(QWEN_30B);
    await loadFor(h, 11, 1000);
    const [warning] = stalled(h);
    expect(warning?.title).toBe('Qwen3-30B-A3B-4bit on studio-a has not moved for 11 s while connecting to its peers');
    expect(warning?.risk).toContain('(not measured yet)');
    const snapshot = { exo: h.monitor.view().section, instances: h.monitor.view().instances, warnings: h.monitor.view().warnings };
    expect(diagnoseExo(snapshot as never).map((c) => c.cause)).toContain('exo_load_stalled');
  });
});
