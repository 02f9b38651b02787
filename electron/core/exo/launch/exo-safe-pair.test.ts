/**
 * The safe launch on exo against the serving fake exo (its placement, instance creation
 * and loading as exo does them), through exobar's real API: a fresh launch, the same
 * launch again (idempotent), placement's refusal, memory too small for both on one Mac,
 * the fast-synch 409 gate, a runner that fails while loading, a timeout, and stopping a
 * model deleting its exo instance. Then as the core wires it: while exo is attached the
 * safe launch is on the cluster (fast synch assumed on for a Mac whose log exobar
 * cannot read), Stop on an exo instance deletes it on exo, and once detached the local
 * safe launch answers again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../../../shared/api';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { FakeExoCluster, LLAMA_1B, LLAMA_3B, QWEN_30B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { pickExoPair, stopExoModel, type ExoSafePairPlan, type FastSynchOf } from './exo-safe-pair';
import { exoSafePairRoutes } from './exo-safe-pair-routes';
import { eventually } from '../../../../test/support/eventually';

let exo: ServingExo | null = null;
let rig: CoreRig | null = null;
afterEach(async () => {
  await rig?.close();
  await exo?.close();
  rig = exo = null;
});

const GiB = 1024 ** 3;
const off: FastSynchOf = () => ({ enabled: false, assumed: false });

async function start(
  options: { ramGb?: number; pair?: [string, string]; fastSynchOf?: FastSynchOf; readyTimeoutMs?: number } = {},
): Promise<{ exo: ServingExo; rig: CoreRig }> {
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a', ramGb: options.ramGb ?? 96 });
  exo = await startServingExo({ cluster, loadStepMs: 10 });
  const settings: Settings = { ...defaultSettings(), safePair: { small: options.pair?.[0] ?? LLAMA_1B, medium: options.pair?.[1] ?? LLAMA_3B } };
  const url = exo.url;
  rig = await startCoreRig({
    extraRoutes: () =>
      exoSafePairRoutes({
        exoUrl: () => url,
        getSettings: () => settings,
        fastSynchOf: options.fastSynchOf ?? off,
        readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
        localRoutes: [],
      }),
  });
  return { exo, rig };
}

const readyRunners = (e: ServingExo) => [...e.cluster.runners.values()].filter((s) => 'RunnerReady' in s).length;

describe('safe launch on exo', () => {
  it('plans where each model lands, launches both one at a time until their runners are ready, and reuses them next time', async () => {
    const { exo, rig } = await start();
    const availableBefore = exo.cluster.node('studio-a').ramAvailable;
    const planned = await rig.control('GET', '/api/launch/safe-pair');
    const plan = planned.body as ExoSafePairPlan;
    expect(plan.canRun).toBe(true);
    expect(plan.models.map((m) => [m.model, m.alreadyRunning])).toEqual([
      [LLAMA_1B, false],
      [LLAMA_3B, false],
    ]);
    expect(plan.exo.placements.map((p) => p.nodes.map((n) => n.name))).toEqual([['studio-a'], ['studio-a']]);
    expect(plan.exo.placements[0]!.nodes[0]!.memoryNeededBytes).toBe(729_808_896);
    expect(plan.exo.placements[0]!.nodes[0]!.memoryAvailableBytes).toBeCloseTo(availableBefore, -1);

    const first = await rig.control('POST', '/api/launch/safe-pair');
    expect(first.status).toBe(200);
    expect(first.body.instances.map((i: { model: string; reused: boolean }) => [i.model, i.reused])).toEqual([
      [LLAMA_1B, false],
      [LLAMA_3B, false],
    ]);
    expect(first.body.launch).toMatchObject({ state: 'done', step: `Ready on exo: ${LLAMA_1B} and ${LLAMA_3B}` });
    expect(exo.cluster.instances.size).toBe(2);
    expect(readyRunners(exo)).toBe(2);
    // Both models' weights now take memory on the Mac (the second placement saw the first's).
    expect(exo.cluster.node('studio-a').ramAvailable).toBeLessThan(availableBefore - 2 * 10 ** 9);

    const again = await rig.control('POST', '/api/launch/safe-pair');
    expect(again.body.instances.map((i: { reused: boolean }) => i.reused)).toEqual([true, true]);
    expect(exo.cluster.instances.size).toBe(2);

    expect(await stopExoModel(exo.url, LLAMA_1B)).toHaveLength(1);
    expect(exo.cluster.instancesOf(LLAMA_1B)).toEqual([]);
  });

  it("shows placement's 400 reason in words and refuses to launch", async () => {
    const { exo, rig } = await start({ ramGb: 8, pair: [LLAMA_1B, QWEN_30B] });
    const plan = (await rig.control('GET', '/api/launch/safe-pair')).body as ExoSafePairPlan;
    expect(plan.canRun).toBe(false);
    expect(plan.blockers).toContain(`exo cannot place ${QWEN_30B}: No cycles found with sufficient memory`);
    const post = await rig.control('POST', '/api/launch/safe-pair');
    expect(post.status).toBe(409);
    expect(post.body.error.message).toContain('No cycles found with sufficient memory');
    expect(exo.cluster.instances.size).toBe(0);
  });

  it('refuses with the per-Mac figures when both fit alone but not together on one Mac, and launches anyway with acknowledgeMemory', async () => {
    const { exo, rig } = await start({ ramGb: 5 });
    const plan = (await rig.control('GET', '/api/launch/safe-pair')).body as ExoSafePairPlan;
    expect(plan.exo.placements.every((p) => p.error === null)).toBe(true);
    const problem = /^Not enough memory on studio-a: needs 2\.\d GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable\.$/;
    expect(plan.blockers).toEqual([expect.stringMatching(problem)]);
    expect(plan.fit).toMatchObject({ fits: false, problems: plan.blockers, gpuLimitBytes: null, risk: expect.stringMatching(/swapping/) });
    expect(plan.fit!.summary).toMatch(/^studio-a needs 2\.\d GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable \(KV cache unknown: exo's model sizes, weights only\)$/);
    expect(plan.fit!.models.map((m) => [m.model, m.weightsSource, m.kvCacheBytes])).toEqual([
      [LLAMA_1B, 'exo', null],
      [LLAMA_3B, 'exo', null],
    ]);

    const refused = await rig.control('POST', '/api/launch/safe-pair');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('insufficient_memory');
    expect(refused.body.error.message).toMatch(/Not enough memory on studio-a: needs 2\.\d GiB/);
    expect(refused.body.error.fit.fits).toBe(false);
    expect(exo.cluster.instances.size).toBe(0);

    const anyway = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeMemory: true });
    expect(anyway.status).toBe(200);
    expect(exo.cluster.instances.size).toBe(2);
    const bad = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeMemory: 'yes' });
    expect(bad.status).toBe(400);
  });

  it('answers 409 fast_synch_shared_gpu for two ring instances on one Mac with fast synch assumed on, unless acknowledged', async () => {
    const { exo, rig } = await start({ fastSynchOf: () => ({ enabled: true, assumed: true }) });
    const refused = await rig.control('POST', '/api/launch/safe-pair');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('fast_synch_shared_gpu');
    expect(refused.body.error.message).toContain('assumed');
    expect(exo.cluster.instances.size).toBe(0);
    const acknowledged = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeRisk: true });
    expect(acknowledged.status).toBe(200);
    expect(exo.cluster.instances.size).toBe(2);
    // Both placed already: nothing new would share the GPU, so no acknowledgement is needed.
    const reused = await rig.control('POST', '/api/launch/safe-pair');
    expect(reused.status).toBe(200);
    expect(reused.body.instances.map((i: { reused: boolean }) => i.reused)).toEqual([true, true]);
  });

  it('says in words that a runner failed while loading, and deletes the instance it created', async () => {
    const { exo, rig } = await start();
    exo.placement.failNextLoad('Terminated (signal=6 (Abort trap: 6))');
    const post = await rig.control('POST', '/api/launch/safe-pair');
    expect(post.status).toBe(503);
    expect(post.body.error.message).toBe(
      `Safe pair launch on exo failed at ${LLAMA_1B}: a runner of ${LLAMA_1B} failed while loading: Terminated (signal=6 (Abort trap: 6))`,
    );
    expect(exo.cluster.instancesOf(LLAMA_1B)).toEqual([]);
  });

  it('gives up after the ready timeout and deletes the instance', async () => {
    const { exo, rig } = await start({ readyTimeoutMs: 400 });
    exo.placement.holdLoading = true;
    const post = await rig.control('POST', '/api/launch/safe-pair');
    expect(post.status).toBe(503);
    expect(post.body.error.message).toContain(`${LLAMA_1B}'s runners did not become ready within 0 s`);
    expect(exo.cluster.instances.size).toBe(0);
  });
});

describe('the safe launch on an attached exo, through the core', () => {
  it('gates, launches, reuses, shows progress in the snapshot, stops on exo, and falls back to the local launch once detached', async () => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', ramGb: 96 });
    exo = await startServingExo({ cluster, loadStepMs: 10 });
    rig = await startCoreRig({ exoUrl: exo.url, settings: { ...defaultSettings(), safePair: { small: LLAMA_1B, medium: LLAMA_3B } } });

    const plan = await rig.control('GET', '/api/launch/safe-pair');
    expect(plan.status).toBe(200);
    expect(plan.body.exo.placements.map((p: { model: string }) => p.model)).toEqual([LLAMA_1B, LLAMA_3B]);
    expect(plan.body.exo.fastSynchRisk).toMatchObject({ assumed: true });

    const refused = await rig.control('POST', '/api/launch/safe-pair');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('fast_synch_shared_gpu');
    expect(exo.cluster.instances.size).toBe(0);

    const launched = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeRisk: true });
    expect(launched.status).toBe(200);
    expect(launched.body.instances.map((i: { reused: boolean }) => i.reused)).toEqual([false, false]);
    expect(rig.core.node.snapshot().launch).toMatchObject({ state: 'done', step: `Ready on exo: ${LLAMA_1B} and ${LLAMA_3B}` });
    const again = await rig.control('POST', '/api/launch/safe-pair');
    expect(again.status).toBe(200);
    expect(again.body.instances.map((i: { reused: boolean }) => i.reused)).toEqual([true, true]);
    expect(exo.cluster.instances.size).toBe(2);

    await eventually(() => rig!.core.node.snapshot().instances.some((i) => i.id === `exo:${LLAMA_1B}`), 5000, 'the exo instance in the snapshot');
    const stopped = await rig.control('DELETE', `/api/instances/${encodeURIComponent(`exo:${LLAMA_1B}`)}`);
    expect(stopped).toMatchObject({ status: 200, body: { id: `exo:${LLAMA_1B}`, deleted: true } });
    expect(exo.cluster.instancesOf(LLAMA_1B)).toEqual([]);

    await rig.control('POST', '/api/exo/detach');
    const local = await rig.control('GET', '/api/launch/safe-pair');
    expect(local.status).toBe(200);
    expect(local.body.exo).toBeUndefined();
  });
});

describe('the safe launch plan while the attached exo does not answer', () => {
  it("answers 200 with this Mac's plan and exo's part unavailable in words, not a 500", async () => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', ramGb: 96 });
    exo = await startServingExo({ cluster, loadStepMs: 10 });
    const url = exo.url;
    rig = await startCoreRig({ exoUrl: url });
    await exo.close();
    exo = null;
    const plan = await rig.control('GET', '/api/launch/safe-pair');
    expect(plan.status).toBe(200);
    expect(plan.body.models.map((m: { model: string }) => m.model)).toEqual(['sim/llama-3.2-1b', 'sim/llama-3.2-3b']);
    expect(plan.body.memory.requiredBytes).toBeGreaterThan(0);
    expect(plan.body.canRun).toBe(false);
    expect(plan.body.exo.unavailable).toMatch(new RegExp(`^exo's part of the plan is unavailable: exo at ${url} could not be reached for GET /`));
    expect(plan.body.exo.unavailable).toContain("The figures below are this Mac's alone.");
    expect(plan.body.blockers).toContain(plan.body.exo.unavailable);
  });
});

describe('the default pair', () => {
  it('takes the two smallest downloaded text models that fit, unless settings name the pair', () => {
    const downloaded = [
      { id: 'big', storageBytes: 40 * GiB, isText: true },
      { id: 'image', storageBytes: 1 * GiB, isText: false },
      { id: 'mid', storageBytes: 4 * GiB, isText: true },
      { id: 'small', storageBytes: 2 * GiB, isText: true },
      { id: 'huge', storageBytes: 900 * GiB, isText: true },
    ];
    expect(pickExoPair(defaultSettings(), downloaded, 64 * GiB)).toEqual(['small', 'mid']);
    expect(pickExoPair(defaultSettings(), downloaded.slice(0, 2), 64 * GiB)).toBeNull();
    expect(pickExoPair({ ...defaultSettings(), safePair: { small: 'a', medium: 'b' } }, downloaded, 64 * GiB)).toEqual(['a', 'b']);
  });
});
