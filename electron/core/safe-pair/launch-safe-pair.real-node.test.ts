/**
 * The safe launch against the real node with sim runner processes: both models ready
 * with fast synch off (decided and reported by the runner's hello), a second launch
 * changes nothing, and a runner that never gets ready leaves no process behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../shared/api';
import type { LaunchProgress } from '../../../shared/snapshot';
import { createNode } from '../node/node';
import { simSpawnSpec } from '../node/sim-spawn-spec';
import type { ExobarNode } from '../node/node-types';
import { launchSafePair } from './launch-safe-pair';
import { launchSection } from './launch-section';
import { planSafePairForNode } from './plan-for-node';
import { processAlive } from '../../../test/support/process-alive';
import { localInstances } from '../../../shared/instance-state';

const GiB = 1024 ** 3;
const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
const plenty = async () => ({ totalBytes: 64 * GiB, freeBytes: 32 * GiB, source: 'os.freemem' as const });

let node: ExobarNode | null = null;
let dataDir = '';

afterEach(async () => {
  await node?.shutdown();
  node = null;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('launchSafePair with the real node', () => {
  it('gets two sim models ready with fast synch off, and a second launch changes nothing', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'exobar-safe-pair-'));
    const n = createNode({ dataDir, simTimeScale: 0.05 });
    node = n;
    const onProgress = launchSection(n.hub);
    const seen: LaunchProgress[] = [];
    const unsubscribe = n.onSnapshot((s) => s.launch && seen.push(s.launch), 5);

    const plan = await planSafePairForNode(n, defaultSettings(), { readMemory: plenty });
    expect(plan.canRun).toBe(true);
    await launchSafePair(n, plan, { pollMs: 20, onProgress });

    const snap = n.snapshot();
    expect(localInstances(snap).map((i) => [i.model, i.instanceType, i.runner.status.kind])).toEqual([
      [SMALL, 'ring', 'RunnerReady'],
      [MEDIUM, 'ring', 'RunnerReady'],
    ]);
    for (const i of localInstances(snap)) {
      // Decided off by the ring rule, and the runner's hello says it sees off.
      expect(i.fastSynch).toMatchObject({ enabled: false, reason: 'ring instance', reported: false });
    }
    expect(snap.warnings).toEqual([]);
    expect(snap.launch).toMatchObject({ state: 'done', error: null });
    expect(seen.some((p) => p.step.startsWith(`Loading ${MEDIUM}`))).toBe(true);

    // Each model answers.
    for (const model of [SMALL, MEDIUM]) {
      const handle = n.submit({ model, messages: [{ role: 'user', content: 'hi' }], maxTokens: 3 }, () => undefined);
      await expect(handle.done).resolves.toMatchObject({ type: 'finished' });
    }

    // Second launch: same instances, same processes.
    const before = localInstances(n.snapshot()).map((i) => [i.id, i.runner.pid]);
    const again = await planSafePairForNode(n, defaultSettings(), { readMemory: plenty });
    expect(again.models.every((m) => m.alreadyRunning)).toBe(true);
    expect(again.memory.requiredBytes).toBe(0);
    const result = await launchSafePair(n, again, { pollMs: 20, onProgress });
    expect(result.instances.every((i) => i.reused)).toBe(true);
    expect(localInstances(n.snapshot()).map((i) => [i.id, i.runner.pid])).toEqual(before);
    unsubscribe();
  });

  it('a runner that never gets ready fails the launch, leaves no process behind and the running model untouched', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'exobar-safe-pair-'));
    const gpuDir = join(dataDir, 'sim-gpu');
    const n = createNode(
      { dataDir, simTimeScale: 0.05, restart: { maxRestarts: 0 } },
      {
        // The medium model's "runner" never says hello (a wedged start); the small one is a real sim runner.
        runnerCommand: (model, _id, engine) =>
          model.id === MEDIUM
            ? { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: {} }
            : simSpawnSpec(model.id, 0.05, gpuDir, engine),
      },
    );
    node = n;
    const onProgress = launchSection(n.hub);
    const pids = new Map<string, number>();
    const unsubscribe = n.onSnapshot((s) => {
      for (const i of localInstances(s)) if (i.runner.pid) pids.set(i.model, i.runner.pid);
    }, 5);

    // The small model runs already (started with a generous deadline, the machine may be
    // busy), so the launch's short deadline applies only to the medium one.
    const small = await n.createInstance({ model: SMALL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await n.waitForReady(small.id, 60_000);

    const plan = await planSafePairForNode(n, defaultSettings(), { readMemory: plenty });
    expect(plan.models.map((m) => m.alreadyRunning)).toEqual([true, false]);
    const err = await launchSafePair(n, plan, { pollMs: 20, readyTimeoutMs: 3000, onProgress }).catch((e: unknown) => e);
    unsubscribe();

    expect(err).toMatchObject({ code: 'launch_failed' });
    expect((err as Error).message).toMatch(/while starting sim\/llama-3\.2-3b/);
    const snap = n.snapshot();
    expect(snap.launch).toMatchObject({ state: 'failed', current: 1 });
    expect(snap.launch?.error).toBe((err as Error).message);
    // The running small model is untouched, the medium one's instance and process are gone.
    expect(localInstances(snap).map((i) => [i.model, i.runner.status.kind])).toEqual([[SMALL, 'RunnerReady']]);
    const mediumPid = pids.get(MEDIUM);
    expect(mediumPid).toBeDefined();
    expect(processAlive(mediumPid ?? -1)).toBe(false);
    expect(processAlive(pids.get(SMALL) ?? -1)).toBe(true);
  });
});
