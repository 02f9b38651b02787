/**
 * A local runner stuck loading, with a real sim runner made to hang mid-load (the sim's
 * load fault, EXOBAR_SIM_LOAD_HANGS_AFTER): exobar warns runner_load_stalled naming the
 * model, the phase, the layers loaded and how long nothing moved, once past the
 * threshold, and the warning goes with the instance when it is stopped. A load that keeps
 * moving raises nothing. The bundle (snapshot.json) and its diagnosis hold it too; the
 * tray lists every warning's title as it does any other (electron/main/tray-state.ts).
 * The threshold's arithmetic is the tracker's test below it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { EXO_SCHEDULE_NO_CACHE, createNodeFixture, submitTracked, type NodeFixture } from '../../../../test/support/node-fixture';
import { diagnose } from '../../diagnostics/diagnosis';
import { collectBundle } from '../../diagnostics/bundle-files';
import type { SystemInfo } from '../../diagnostics/system-info';
import { eventually } from '../../../../test/support/eventually';
import { simSpawnSpec } from '../sim-spawn-spec';
import { RunnerLoadStallTracker } from './runner-load-stall';

const TIME_SCALE = 0.05;
const MODEL = 'sim/llama-3.2-1b';
let fixture: NodeFixture | null = null;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = null;
});

/** A node whose sim runners hang after `hangAfter` loading updates (null: they load). */
function nodeWithLoadFault(hangAfter: number | null): NodeFixture {
  const gpuDir = mkdtempSync(join(tmpdir(), 'exobar-load-stall-gpu-'));
  return createNodeFixture(
    // The least the setting allows; a sim runner's floor shrinks with its time scale (to its 1 s minimum).
    { simTimeScale: TIME_SCALE, runnerSettings: () => ({ ...EXO_SCHEDULE_NO_CACHE, loadStallSeconds: 10 }) },
    {
      runnerCommand: (model, _id, engine) => {
        const spec = simSpawnSpec(model.id, TIME_SCALE, gpuDir, engine);
        return hangAfter === null ? spec : { ...spec, env: { ...spec.env, EXOBAR_SIM_LOAD_HANGS_AFTER: String(hangAfter) } };
      },
    },
  );
}

const SYSTEM = async (): Promise<SystemInfo> => ({
  platform: 'linux',
  arch: 'x64',
  osRelease: '6',
  kernelVersion: '6',
  cpu: { model: 'cpu', count: 2 },
  memory: { totalBytes: 1, freeBytes: 1, freeSource: 'os' },
  loadAverage: [0, 0, 0],
  systemUptimeS: 1,
  macos: null,
});
const warningOf = (f: NodeFixture) => stalled(f)[0];
const stalled = (f: NodeFixture) => f.node.snapshot().warnings.filter((w) => w.code === 'runner_load_stalled');

describe("a local runner's load that stops moving", () => {
  it('is warned about with the model, the phase, the layers and how long, and goes when the instance is stopped', async () => {
    fixture = nodeWithLoadFault(2);
    const { id } = await fixture.node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await eventually(() => stalled(fixture!).length === 1, 20_000, 'runner_load_stalled');
    const [warning] = stalled(fixture);
    expect(warning).toMatchObject({ instanceIds: [id], model: MODEL });
    expect(warning!.title).toMatch(/^Llama 3\.2 1B \(simulated\) has not moved for \d+ s while loading, \d+ of 16 layers loaded$/);
    expect(warning!.risk).toMatch(/Threshold 1 s, from the model's size \(1\.4 GiB\) and this Mac's load speed \(\d+ MB\/s as measured\)/);
    expect(warning!.fix).toContain(`DELETE /api/instances/${id}`);
    const instance = fixture.node.snapshot().instances.find((i) => i.id === id)!;
    expect(instance.source === 'local' && instance.runner.state).toBe('loading');
    expect(fixture.node.eventLog.all().some((e) => e.kind === 'warning_raised' && (e.data as { code: string }).code === 'runner_load_stalled')).toBe(true);

    // A request that waits for it: the diagnosis names the stall, not a slow load.
    const waiting = submitTracked(fixture.node, { model: MODEL, messages: makePrompt(20, 'waits-for-load'), maxTokens: 4 });
    await eventually(() => fixture!.node.requestTimelines().some((t) => t.requestId === waiting.handle.id), 10_000, 'the request queued');
    const finding = diagnose(fixture.node.requestTimelines(), fixture.node.eventLog.all(), { now: performance.now(), thresholdMs: 0 }).findings.find(
      (f) => f.requestId === waiting.handle.id,
    );
    expect(finding).toMatchObject({ cause: 'runner_load_stalled', bugToReport: false });
    expect(warningOf(fixture)!.risk).toContain('(1 waiting)');

    // The bundle holds it: the warning in snapshot.json, the request's cause in the diagnosis.
    const bundle = await collectBundle({ node: fixture.node, dataDir: fixture.dataDir, settings: null, version: '0.0.0-test', systemInfo: SYSTEM, diagnosis: { thresholdMs: 0 } });
    const snapshotJson = JSON.parse(bundle.files.find((f) => f.name === 'snapshot.json')!.data.toString('utf8')) as { warnings: { code: string }[] };
    expect(snapshotJson.warnings.map((w) => w.code)).toContain('runner_load_stalled');
    expect(bundle.diagnosis?.findings.find((f) => f.requestId === waiting.handle.id)?.cause).toBe('runner_load_stalled');

    await fixture.node.deleteInstance(id);
    await eventually(() => stalled(fixture!).length === 0, 10_000, 'the warning gone with the instance');
  }, 60_000);

  it('raises nothing for a load that keeps moving', async () => {
    fixture = nodeWithLoadFault(null);
    const instance = await fixture.launch(MODEL);
    expect(fixture.node.eventLog.all().filter((e) => e.kind === 'warning_raised')).toEqual([]);
    expect(instance).toBeTruthy();
  }, 60_000);
});

describe('the threshold', () => {
  const reading = (state: 'starting' | 'loading' | 'warming_up', layers: number | null) => ({
    instanceId: 'i1',
    state,
    status: layers === null ? ({ kind: 'RunnerIdle' } as const) : ({ kind: 'RunnerLoading', layersLoaded: layers, totalLayers: 10 } as const),
    sizeBytes: 10e9,
    floorMs: 10_000,
  });

  it("is a layer's time at this Mac's measured speed times five while loading, never under the floor", () => {
    const tracker = new RunnerLoadStallTracker();
    tracker.observe(0, [reading('loading', 0)]);
    // 1 layer of a 10 GB, 10-layer model in 20 s: 50 MB/s, 20 s a layer, so 100 s without a layer is a stall.
    tracker.observe(20_000, [reading('loading', 1)]);
    expect(tracker.observe(120_000, [reading('loading', 1)])).toEqual([]);
    const [stall] = tracker.observe(120_001, [reading('loading', 1)]);
    expect(stall).toMatchObject({ thresholdMs: 100_000, measuredBytesPerS: 50e6, layersLoaded: 1, totalLayers: 10, stillSince: 20_000 });
  });

  it('is the whole model at the assumed speed before a measurement, outside loading', () => {
    const tracker = new RunnerLoadStallTracker({ stallFactor: 5, assumedBytesPerS: 1e9 });
    tracker.observe(0, [reading('warming_up', null)]);
    // 10 GB at 1 GB/s: 10 s, times five.
    expect(tracker.observe(50_000, [reading('warming_up', null)])).toEqual([]);
    expect(tracker.observe(50_001, [reading('warming_up', null)])[0]).toMatchObject({ state: 'warming_up', thresholdMs: 50_000, measuredBytesPerS: null });
    // Ready: no longer a load, nothing tracked.
    expect(tracker.observe(60_000, [{ ...reading('loading', null), state: 'ready' }])).toEqual([]);
  });
});
