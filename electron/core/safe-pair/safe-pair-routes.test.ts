/**
 * /api/launch/safe-pair through the real API server and node with sim runners: the plan,
 * the launch, a chat completion to each model, the idempotent second POST, the 409 for
 * a blocked plan; and the `wait=none` and joining paths over a fake node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings, type SafePairPlan } from '../../../shared/api';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';
import type { ApiRoute, RouteContext } from '../api/route-types';
import type { ExobarNode } from '../node/node-types';
import type { SystemMemory } from '../system-memory';
import { walkingFakeNode, type FakeNode } from '../../../test/support/fake-node';
import { safePairRoutes } from './safe-pair-routes';

const GiB = 1024 ** 3;
const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';

describe('/api/launch/safe-pair on the real core', () => {
  let rig: CoreRig;
  let memory: SystemMemory = { totalBytes: 64 * GiB, freeBytes: 32 * GiB, source: 'os.freemem' };

  beforeAll(async () => {
    rig = await startCoreRig({
      simTimeScale: 0.05,
      extraRoutes: ({ settings, showLaunch }) =>
        safePairRoutes({ getSettings: () => settings, readMemory: async () => memory, launch: { pollMs: 20, onProgress: showLaunch } }),
    });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('refuses a blocked plan with 409 in the OpenAI error shape, and starts nothing', async () => {
    memory = { totalBytes: 8 * GiB, freeBytes: 3 * GiB, source: 'os.freemem' };
    const plan = await rig.control('GET', '/api/launch/safe-pair');
    expect(plan.status).toBe(200);
    expect(plan.body.canRun).toBe(false);
    const post = await rig.control('POST', '/api/launch/safe-pair');
    expect(post.status).toBe(409);
    expect(post.body.error).toMatchObject({ code: 'launch_failed', type: 'conflict_error' });
    expect(post.body.error.message).toMatch(
      /Not enough memory: needs 5\.9 GiB; 3\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 1\.0 GiB usable/,
    );
    expect(rig.node.snapshot().instances).toEqual([]);
    memory = { totalBytes: 64 * GiB, freeBytes: 32 * GiB, source: 'os.freemem' };
  });

  it('GET plans without doing anything; POST gets both ready with fast synch off; a second POST changes nothing', async () => {
    const got = await rig.control('GET', '/api/launch/safe-pair');
    expect(got.status).toBe(200);
    const plan = got.body as SafePairPlan;
    expect(plan.canRun).toBe(true);
    expect(plan.models.map((m) => [m.model, m.instanceType, m.fastSynch, m.fastSynchReason, m.alreadyRunning])).toEqual([
      [SMALL, 'ring', false, 'ring instance', false],
      [MEDIUM, 'ring', false, 'ring instance', false],
    ]);
    expect(rig.node.snapshot().instances).toEqual([]);

    const post = await rig.control('POST', '/api/launch/safe-pair');
    expect(post.status).toBe(200);
    expect(post.body.launch).toMatchObject({ state: 'done', error: null });
    expect(post.body.plan.models.every((m: { alreadyRunning: boolean }) => m.alreadyRunning)).toBe(true);
    expect(post.body.plan.models.map((m: { state: string }) => m.state)).toEqual(['serving', 'serving']);

    const state = await rig.control('GET', '/api/state');
    const instances = state.body.instances as Array<{
      id: string;
      model: string;
      runner: { pid: number; status: { kind: string } };
      fastSynch: { enabled: boolean; reported: boolean | null };
    }>;
    expect(instances.map((i) => [i.model, i.runner.status.kind, i.fastSynch.enabled, i.fastSynch.reported])).toEqual([
      [SMALL, 'RunnerReady', false, false],
      [MEDIUM, 'RunnerReady', false, false],
    ]);
    expect(state.body.warnings).toEqual([]);

    for (const model of [SMALL, MEDIUM]) {
      const completion = await rig.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 3 });
      expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
    }

    const again = await rig.control('POST', '/api/launch/safe-pair');
    expect(again.status).toBe(200);
    expect(again.body.instances.map((i: { reused: boolean }) => i.reused)).toEqual([true, true]);
    const after = await rig.control('GET', '/api/state');
    expect(after.body.instances.map((i: (typeof instances)[number]) => [i.id, i.runner.pid])).toEqual(instances.map((i) => [i.id, i.runner.pid]));
  });

  it('plans a model whose instance still loads as loading, not as running', async () => {
    await rig.control('DELETE', '/api/instances?confirm=1');
    // Not waited for: the runner process is still starting when the plan is read.
    await rig.control('POST', '/api/instances', { model: MEDIUM });
    const plan = (await rig.control('GET', '/api/launch/safe-pair')).body as SafePairPlan;
    expect(plan.models.map((m) => [m.model, m.alreadyRunning, m.state])).toEqual([
      [SMALL, false, null],
      [MEDIUM, true, 'loading'],
    ]);
    expect(plan.memory.requiredBytes).toBe(plan.models[0]?.memoryBytes);
  });

  it('needs the bearer token', async () => {
    const res = await rig.control('GET', '/api/launch/safe-pair', undefined, { Authorization: 'Bearer wrong' });
    expect(res.status).toBe(401);
  });
});

describe('safePairRoutes handlers', () => {
  /** The POST route reporting its launches' progress to this node's launch section. */
  const postFor = (node: FakeNode): ApiRoute | undefined =>
    safePairRoutes({
      getSettings: defaultSettings,
      readMemory: async () => ({ totalBytes: 64 * GiB, freeBytes: 32 * GiB, source: 'os.freemem' }),
      launch: { pollMs: 1, onProgress: node.showLaunch },
    }).find((r) => r.method === 'POST');

  function call(node: FakeNode, query = '') {
    const route = postFor(node);
    const answer: { status: number; body: unknown } = { status: 0, body: null };
    const warned: unknown[] = [];
    const ctx = {
      req: { headers: {} },
      url: new URL(`http://127.0.0.1/api/launch/safe-pair${query}`),
      params: {},
      node: node as unknown as ExobarNode,
      log: { warn: (obj: unknown) => warned.push(obj) },
      json: (status: number, body: unknown) => Object.assign(answer, { status, body }),
    } as unknown as RouteContext;
    return { done: Promise.resolve(route?.handle(ctx)), answer, warned };
  }

  it('wait=none answers 202 at once and the launch goes on; a POST meanwhile joins it', async () => {
    const node = walkingFakeNode({ stepMs: 5 });
    const first = call(node, '?wait=none');
    await first.done;
    expect(first.answer.status).toBe(202);
    expect(first.answer.body).toMatchObject({ launching: true, launch: { state: 'running' } });

    const second = call(node);
    await second.done;
    expect(second.answer.status).toBe(200);
    expect(node.calls.filter((c) => c.startsWith('create'))).toEqual([`create ${SMALL}`, `create ${MEDIUM}`]);
    expect(node.snapshot().launch?.state).toBe('done');
  });

  it('wait=none logs a later failure (its details are in the snapshot)', async () => {
    const node = walkingFakeNode({ failLoading: { [SMALL]: 1 } });
    const res = call(node, '?wait=none');
    await res.done;
    expect(res.answer.status).toBe(202);
    await expect.poll(() => node.snapshot().launch?.state).toBe('failed');
    await expect.poll(() => res.warned.length).toBe(1);
  });

  it('rejects an unknown query parameter', async () => {
    const res = call(walkingFakeNode(), '?wait=maybe');
    await expect(res.done).rejects.toMatchObject({ status: 400, code: 'invalid_query' });
  });
});
