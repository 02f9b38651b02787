import { describe, expect, it } from 'vitest';
import { defaultSettings, type SafePairPlan, type Settings } from '../../../shared/api';
import { NodeError } from '../node/node-types';
import { walkingFakeNode, type FakeNode, type FakeNodeOptions } from '../../../test/support/fake-node';
import { currentSafePairLaunch, launchSafePair } from './launch-safe-pair';
import { planSafePairForNode, runningInstancesFromSnapshot } from './plan-for-node';
import { localInstances } from '../../../shared/instance-state';

const GiB = 1024 ** 3;
const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
const plenty = async () => ({ totalBytes: 64 * GiB, freeBytes: 32 * GiB, source: 'os.freemem' as const });

async function setup(options: FakeNodeOptions = {}, settings: Settings = defaultSettings()) {
  const node = walkingFakeNode(options);
  const plan = await planSafePairForNode(node, settings, { readMemory: plenty });
  return { node, plan };
}

const steps = (node: FakeNode) => node.progress.map((p) => p.step);

describe('launchSafePair', () => {
  it('launches both models one after the other, reporting each step and loading progress', async () => {
    const { node, plan } = await setup();
    expect(plan.canRun).toBe(true);
    const result = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });

    expect(result.instances.map((i) => [i.model, i.reused])).toEqual([
      [SMALL, false],
      [MEDIUM, false],
    ]);
    // Sequential: the second model is created only after the first was waited for.
    expect(node.calls.filter((c) => !c.startsWith('delete'))).toEqual(['create ' + SMALL, 'wait inst-1', 'create ' + MEDIUM, 'wait inst-2']);
    const all = steps(node);
    expect(all).toContain(`Starting ${SMALL}`);
    expect(all.some((s) => /^Loading sim\/llama-3\.2-1b \(\d+\/16 layers\)$/.test(s))).toBe(true);
    expect(all.some((s) => /^Loading sim\/llama-3\.2-3b \(\d+\/28 layers\)$/.test(s))).toBe(true);
    expect(all.indexOf(`${SMALL} ready`)).toBeLessThan(all.indexOf(`Starting ${MEDIUM}`));
    // `current` points at the model being launched.
    expect(node.progress.find((p) => p.step.startsWith(`Loading ${MEDIUM}`))?.current).toBe(1);

    const last = node.progress.at(-1);
    expect(last).toMatchObject({ state: 'done', error: null, models: [SMALL, MEDIUM], step: `Ready: ${SMALL} and ${MEDIUM}` });
    // Every progress report of one launch shares its start time.
    expect(new Set(node.progress.map((p) => p.startedAt)).size).toBe(1);

    const instances = localInstances(node.snapshot());
    expect(instances.map((i) => [i.model, i.instanceType, i.fastSynch.enabled, i.fastSynch.reason, i.runner.status.kind])).toEqual([
      [SMALL, 'ring', false, 'ring instance', 'RunnerReady'],
      [MEDIUM, 'ring', false, 'ring instance', 'RunnerReady'],
    ]);
  });

  it('is idempotent: a second launch reuses both instances and starts nothing', async () => {
    const { node, plan } = await setup();
    await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });
    const before = node.snapshot().instances;
    node.calls.length = 0;

    const again = await planSafePairForNode(node, defaultSettings(), { readMemory: plenty });
    expect(again.models.every((m) => m.alreadyRunning)).toBe(true);
    const result = await launchSafePair(node, again, { pollMs: 1, onProgress: node.showLaunch });

    expect(result.instances.map((i) => i.reused)).toEqual([true, true]);
    expect(node.calls.some((c) => c.startsWith('create') || c.startsWith('delete'))).toBe(false);
    expect(node.snapshot().instances).toEqual(before);
    expect(node.progress.at(-1)).toMatchObject({ state: 'done', step: `Already running: ${SMALL} and ${MEDIUM}` });
  });

  it('reuses a model that is already running and starts only the other', async () => {
    const node = walkingFakeNode();
    const existing = node.addReady(MEDIUM);
    const plan = await planSafePairForNode(node, defaultSettings(), { readMemory: plenty });
    const result = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });
    expect(node.calls.filter((c) => c.startsWith('create'))).toEqual([`create ${SMALL}`]);
    expect(result.instances).toEqual([
      { model: SMALL, instanceId: 'inst-2', reused: false },
      { model: MEDIUM, instanceId: existing, reused: true },
    ]);
  });

  it('looks at the node at launch time, not only at the plan (a stale plan starts nothing twice)', async () => {
    const { node, plan } = await setup();
    node.addReady(SMALL);
    node.addReady(MEDIUM);
    const result = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });
    expect(result.instances.every((i) => i.reused)).toBe(true);
    expect(node.calls.filter((c) => c.startsWith('create'))).toEqual([]);
  });

  it('joins a launch under way instead of starting another', async () => {
    const { node, plan } = await setup();
    const first = launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });
    expect(currentSafePairLaunch(node)).toBe(first);
    const second = launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch });
    expect(second).toBe(first);
    await Promise.all([first, second]);
    expect(node.calls.filter((c) => c.startsWith('create'))).toHaveLength(2);
    expect(node.snapshot().instances).toHaveLength(2);
    expect(currentSafePairLaunch(node)).toBeNull();
  });

  it('refuses a plan with blockers (409) and touches nothing', async () => {
    const node = walkingFakeNode();
    const plan = await planSafePairForNode(node, defaultSettings(), {
      readMemory: async () => ({ totalBytes: 8 * GiB, freeBytes: 1 * GiB, source: 'os.freemem' }),
    });
    expect(plan.canRun).toBe(false);
    const err = await launchSafePair(node, plan, { onProgress: node.showLaunch }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeError);
    expect(err).toMatchObject({ code: 'launch_failed', status: 409 });
    expect((err as Error).message).toMatch(
      /Not enough memory: needs 5\.9 GiB; 1\.0 GiB free, less than the 2\.0 GiB kept free for macOS and other apps: nothing usable/,
    );
    expect(node.calls).toEqual([]);
    expect(node.progress).toEqual([]);
  });

  it('refuses a hand-made plan marked not runnable even without blockers', async () => {
    const { node, plan } = await setup();
    const bad: SafePairPlan = { ...plan, canRun: false };
    await expect(launchSafePair(node, bad, { onProgress: node.showLaunch })).rejects.toMatchObject({ code: 'launch_failed', status: 409 });
  });

  it('a failure part way: progress failed with the error, the half-started instance deleted, the first left running', async () => {
    const { node, plan } = await setup({ failLoading: { [MEDIUM]: 5 } });
    const err = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch }).catch((e: unknown) => e);

    expect(err).toMatchObject({ code: 'launch_failed', status: 502 });
    expect((err as Error).message).toBe(`Safe pair launch failed while starting ${MEDIUM}: out of memory at layer 5`);
    expect(node.calls).toContain('delete inst-2');
    expect(node.calls).not.toContain('delete inst-1');
    expect(localInstances(node.snapshot()).map((i) => [i.id, i.model, i.runner.status.kind])).toEqual([['inst-1', SMALL, 'RunnerReady']]);
    expect(node.progress.at(-1)).toMatchObject({ state: 'failed', current: 1, step: `Failed at ${MEDIUM}`, error: (err as Error).message });
    expect(currentSafePairLaunch(node)).toBeNull();

    // A later launch can go again and reuses the model that made it.
    const retry = await planSafePairForNode(node, defaultSettings(), { readMemory: plenty });
    expect(retry.models.map((m) => m.alreadyRunning)).toEqual([true, false]);
  });

  it('a createInstance refusal keeps its 4xx status and leaves nothing to delete', async () => {
    const refusal = new NodeError('fast_synch_shared_gpu', 'would put two ring runners with fast synch on one GPU', 409);
    const { node, plan } = await setup({ failCreate: { [SMALL]: refusal } });
    const err = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'launch_failed', status: 409 });
    expect((err as Error).message).toMatch(/would put two ring runners/);
    expect(node.calls.filter((c) => c.startsWith('delete'))).toEqual([]);
    expect(node.snapshot().instances).toEqual([]);
    expect(node.progress.at(-1)?.state).toBe('failed');
  });

  it('says so when removing the half-started instance fails too', async () => {
    const { node, plan } = await setup({ failLoading: { [SMALL]: 2 }, failDelete: true });
    const err = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/removing its instance also failed: delete refused/);
  });

  it('never deletes an instance it did not start, even when that one fails', async () => {
    const node = walkingFakeNode();
    const existing = node.addReady(SMALL);
    node.failInstance(existing, 'GPU wedged');
    const plan = await planSafePairForNode(node, defaultSettings(), { readMemory: plenty });
    const err = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`Safe pair launch failed: the running instance of ${SMALL} did not become ready: GPU wedged`);
    expect(node.calls.filter((c) => c.startsWith('delete') || c.startsWith('create'))).toEqual([]);
    expect(node.snapshot().instances.map((i) => i.id)).toEqual([existing]);
  });

  it('stops if the node would put fast synch on where the plan has it off', async () => {
    // The plan was made with settings saying auto; the node still runs with default "on".
    const { node, plan } = await setup({ defaultFastSynch: 'on' });
    expect(plan.models.every((m) => !m.fastSynch)).toBe(true);
    const err = await launchSafePair(node, plan, { pollMs: 1, onProgress: node.showLaunch }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/would run sim\/llama-3\.2-1b with fast synch on \(forced on by settings default\)/);
    expect(node.calls).toContain('delete inst-1');
    expect(node.snapshot().instances).toEqual([]);
  });
});

describe('planSafePairForNode', () => {
  it('plans against the node catalog, its instances and the memory read', async () => {
    const node = walkingFakeNode();
    node.addReady(SMALL, 'ring', true);
    const plan = await planSafePairForNode(node, defaultSettings(), { readMemory: plenty, headroomBytes: 1 * GiB });
    expect(plan.memory).toMatchObject({ freeBytes: 32 * GiB, headroomBytes: 1 * GiB });
    expect(plan.models[0]).toMatchObject({ model: SMALL, alreadyRunning: true, fastSynch: true, fastSynchReason: 'forced on by user' });
    // The reused small model has fast synch on: starting the medium beside it is the hazard.
    expect(plan.canRun).toBe(false);
    expect(plan.blockers[0]).toMatch(/Fast synch is on for sim\/llama-3\.2-1b/);
  });

  it('maps snapshot instances for the planner', () => {
    const node = walkingFakeNode();
    const id = node.addReady(MEDIUM, 'jaccl', true);
    expect(runningInstancesFromSnapshot(node.snapshot())).toEqual([
      { id, model: MEDIUM, instanceType: 'jaccl', fastSynch: true, fastSynchReason: 'forced on by user', state: 'serving' },
    ]);
  });

  it('reads the real OS memory when none is given', async () => {
    const plan = await planSafePairForNode(walkingFakeNode(), defaultSettings());
    expect(plan.memory.freeBytes).toBeGreaterThan(0);
  });
});
