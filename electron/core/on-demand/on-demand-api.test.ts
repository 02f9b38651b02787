/**
 * Models on demand through the official `openai` client, against the real core and sim
 * runner processes: a cold model loads for a request (queue phase `loading`, a `load`
 * part in its TTFT), five concurrent requests start one runner, idle unload after a
 * short time to live, eviction of the least recently used idle unpinned instance under
 * the cap, pinned and busy instances never evicted, refusals by the fit check and the
 * fast-synch gate in words, and the off switch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import { defaultSettings, type Settings } from '../../../shared/api';
import { localInstances } from '../../../shared/instance-state';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';
import { fitForLaunch } from '../fit/fit-for-launch';
import type { NodeEvent } from '../node/node-types';
import type { ModelEventRecord, RequestRecord } from '../../../shared/request-record';
import { eventually, sleep } from '../../../test/support/eventually';

const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
const GiB = 1024 ** 3;
const hi = [{ role: 'user' as const, content: 'hi' }];

let rig: CoreRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** A core whose settings the test can change while it runs, with `freeGiB` of memory free to the fit check. */
async function start(onDemand: Partial<Settings['onDemand']> = {}, options: { freeGiB?: number; defaultFastSynch?: Settings['defaultFastSynch'] } = {}) {
  const settings: Settings = {
    ...defaultSettings(),
    defaultFastSynch: options.defaultFastSynch ?? 'auto',
    onDemand: { ...defaultSettings().onDemand, ...onDemand },
  };
  const freeBytes = (options.freeGiB ?? 64) * GiB;
  rig = await startCoreRig({
    simTimeScale: 0.5,
    settings,
    getSettings: () => settings,
    // The launch's fit check with this machine's readings replaced: `freeBytes` free, no GPU wired limit (not a Mac).
    fitChecker: (input) =>
      fitForLaunch({ ...input, readMemory: async () => ({ totalBytes: 128 * GiB, freeBytes, source: 'meminfo' }), readGpuLimit: async () => null }),
    onDemand: { reapIntervalMs: 100 },
  });
  return { rig, settings };
}

const instancesOf = (r: CoreRig, model?: string) => localInstances(r.node.snapshot()).filter((i) => model === undefined || i.model === model);
const events = (r: CoreRig, kind: NodeEvent['kind']) => r.node.recentEvents().filter((e) => e.kind === kind);

describe('load on request', () => {
  it('answers a request for a cold model after the load, waiting as "loading" with the layers, its TTFT with a load part', async () => {
    const { rig: r } = await start();
    expect(instancesOf(r)).toHaveLength(0);
    const seen = { loadingPhase: false, layers: false };
    const unsubscribe = r.node.onSnapshot((s) => {
      for (const i of localInstances(s)) {
        if (i.queue.requests.some((q) => q.phase === 'loading')) seen.loadingPhase = true;
        if (i.runner.status.kind === 'RunnerLoading' && i.runner.status.totalLayers > 0) seen.layers = true;
      }
    }, 0);
    const stream = await r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 5, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    unsubscribe();
    expect(text.length).toBeGreaterThan(0);
    expect(seen).toEqual({ loadingPhase: true, layers: true });

    const [instance] = instancesOf(r, SMALL);
    expect(instance).toMatchObject({ instanceType: 'ring', fastSynch: { enabled: false, reason: expect.stringMatching(/ring/) } });
    expect(instance!.residency).toMatchObject({ loadedOnDemand: true, pinned: false, ttlSeconds: 1800 });
    const sample = instance!.ttft.latest!;
    // The sim 1B loads in ~0.5 s at this time scale (0.8 s load + 0.2 s warm-up, x0.5).
    expect(sample.loadMs).toBeGreaterThan(300);
    expect(sample.loadMs! + sample.waitMs + (sample.runnerWaitMs ?? 0) + sample.prefillMs + sample.firstTokenMs).toBeCloseTo(sample.totalMs, 0);
    const timeline = r.node.requestTimelines().find((t) => t.requestId === sample.requestId)!;
    expect(timeline.loadedAt).toBeGreaterThan(timeline.arrivedAt);
    expect(events(r, 'instance_created').at(-1)).toMatchObject({ data: { model: SMALL, onDemand: true, instanceType: 'ring', fastSynch: false } });
    expect(events(r, 'instance_loaded').at(-1)).toMatchObject({ data: { model: SMALL, onDemand: true } });
    const firstToken = events(r, 'first_token').at(-1) as Extract<NodeEvent, { kind: 'first_token' }>;
    expect(firstToken.data.loadMs).toBeGreaterThan(300);

    // Warm now: the next request waits for no load.
    await r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 2 });
    expect(instancesOf(r, SMALL)[0]!.ttft.latest!.loadMs).toBeUndefined();
  });

  it('starts one runner for five concurrent requests for a cold model', async () => {
    const { rig: r } = await start();
    const answers = await Promise.all(Array.from({ length: 5 }, () => r.client.chat.completions.create({ model: MEDIUM, messages: hi, max_tokens: 3 })));
    expect(answers.every((a) => a.choices[0]!.message.content!.length > 0)).toBe(true);
    expect(instancesOf(r, MEDIUM)).toHaveLength(1);
    expect(events(r, 'instance_created')).toHaveLength(1);
    expect(events(r, 'runner_spawned')).toHaveLength(1);
    expect(instancesOf(r, MEDIUM)[0]!.ttft.samples.filter((s) => s.loadMs !== undefined)).toHaveLength(5);
  });

  it('lists every servable model with its state, and with loading on request off answers 404 saying how to launch', async () => {
    const { rig: r, settings } = await start();
    await r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 1 });
    const list = await r.client.models.list();
    expect(list.data.map((m) => [m.id, (m as unknown as { state: string }).state])).toEqual([
      [SMALL, 'loaded'],
      [MEDIUM, 'available'],
    ]);
    settings.onDemand.enabled = false;
    expect((await r.client.models.list()).data.map((m) => m.id)).toEqual([SMALL]);
    const refused = await r.client.chat.completions.create({ model: MEDIUM, messages: hi }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as APIError).message).toMatch(/not running; launch it first: POST \/api\/instances/);
  });
});

describe('refusals, in words', () => {
  it('refuses a load that does not fit in memory, and says so in the event log', async () => {
    const { rig: r } = await start({}, { freeGiB: 2.5 });
    const refused = await r.client.chat.completions.create({ model: MEDIUM, messages: hi }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 503, code: 'model_does_not_fit' });
    expect((refused as APIError).message).toMatch(
      /sim\/llama-3\.2-3b cannot load: Not enough memory: needs 4\.3 GiB; 2\.5 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 0\.5 GiB usable; nothing else can unload$/,
    );
    expect((refused as APIError).headers?.get('x-should-retry')).toBe('false');
    expect(instancesOf(r)).toHaveLength(0);
    expect(events(r, 'model_load_refused').at(-1)).toMatchObject({ data: { model: MEDIUM, code: 'model_does_not_fit' } });
  });

  it('refuses a load the fast-synch gate would let share the GPU with fast synch on', async () => {
    const { rig: r } = await start({}, { defaultFastSynch: 'on' });
    await r.launch(SMALL);
    expect(instancesOf(r, SMALL)[0]!.fastSynch.enabled).toBe(true);
    const refused = await r.client.chat.completions.create({ model: MEDIUM, messages: hi }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 409, code: 'fast_synch_shared_gpu' });
    expect((refused as APIError).message).toMatch(/was not loaded: it would share the GPU as a ring instance with sim\/llama-3\.2-1b while fast synch is on/);
    expect(instancesOf(r, MEDIUM)).toHaveLength(0);
  });
});

describe('unload when idle; pin what must stay', () => {
  it('unloads an idle instance after its keep_alive, never while a request runs', async () => {
    const { rig: r } = await start();
    // A long answer (~3 s of decode) with a 1 s time to live: it must outlive the TTL while busy.
    const long = r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 1500, keep_alive: 1 } as never);
    await eventually(() => instancesOf(r, SMALL)[0]?.queue.requests.some((q) => q.phase === 'decoding'), 10_000, 'decoding');
    await sleep(1500);
    expect(instancesOf(r, SMALL)).toHaveLength(1);
    expect(instancesOf(r, SMALL)[0]!.residency).toMatchObject({ ttlSeconds: 1, idleSince: null, unloadsAt: null });
    await long;
    const idle = instancesOf(r, SMALL)[0]!;
    expect(idle.residency.unloadsAt).not.toBeNull();
    await eventually(() => instancesOf(r, SMALL).length === 0, 5000, 'idle unload');
    expect(events(r, 'instance_unloaded').at(-1)).toMatchObject({ instanceId: idle.id, data: { model: SMALL, reason: 'idle' } });
    expect((events(r, 'instance_unloaded').at(-1) as Extract<NodeEvent, { kind: 'instance_unloaded' }>).data.idleMs).toBeGreaterThanOrEqual(900);
    // The load and the unload are rows of the request log beside the request, newest first.
    const log = (await r.control('GET', `/api/requests?model=${encodeURIComponent(SMALL)}`)).body as { events: ModelEventRecord[]; requests: RequestRecord[] };
    expect(log.requests).toHaveLength(1);
    expect(log.requests[0]!.loadMs).toBeGreaterThan(300);
    expect(log.events.map((e) => [e.event, e.instance, e.reason])).toEqual([
      ['unload', idle.id, expect.stringMatching(/^idle \d+ s$/)],
      ['load', idle.id, 'on demand for a request'],
    ]);
    expect(log.events[1]!.durationMs).toBeGreaterThan(300);
  });

  it("keeps a pinned instance and one with keep_alive -1; unloads on the operator's word", async () => {
    const { rig: r } = await start({ idleTtlSeconds: 1 });
    const pinned = await r.control('POST', '/api/instances?wait=ready', { model: SMALL, pin: true });
    expect(pinned.status).toBe(201);
    expect(pinned.body.instance.residency).toMatchObject({ pinned: true, unloadsAt: null });
    await r.client.chat.completions.create({ model: MEDIUM, messages: hi, max_tokens: 1, keep_alive: -1 } as never);
    await sleep(1600);
    expect(
      instancesOf(r)
        .map((i) => i.model)
        .sort(),
    ).toEqual([SMALL, MEDIUM]);
    expect(instancesOf(r, MEDIUM)[0]!.residency.ttlSeconds).toBeNull();
    // The operator: unload now.
    const unloaded = await r.control('POST', `/api/instances/${pinned.body.id}/unload`);
    expect(unloaded).toMatchObject({ status: 200, body: { unloaded: true } });
    expect(events(r, 'instance_unloaded').at(-1)).toMatchObject({ data: { reason: 'operator' } });
    // Unpin-and-TTL through the residency endpoint.
    const medium = instancesOf(r, MEDIUM)[0]!;
    const changed = await r.control('POST', `/api/instances/${medium.id}/residency`, { ttlSeconds: 0 });
    expect(changed.body.instance.residency.ttlSeconds).toBe(0);
    await eventually(() => instancesOf(r).length === 0, 5000, 'unload after ttlSeconds 0');
  });

  it('evicts the least recently used idle unpinned instance under the cap', async () => {
    const { rig: r } = await start({ maxModels: 2 });
    const a = await r.launch(SMALL);
    const b = (await r.control('POST', '/api/instances?wait=ready', { model: SMALL, duplicate: true })).body.id as string;
    // The one a request goes to is used last: the other is the least recently used.
    await r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 1 });
    const used = r.node.requestTimelines().at(-1)!.instanceId;
    const lru = used === a ? b : a;
    await r.client.chat.completions.create({ model: MEDIUM, messages: hi, max_tokens: 1 });
    const ids = instancesOf(r).map((i) => i.id);
    expect(ids).not.toContain(lru);
    expect(ids).toContain(used);
    expect(events(r, 'instance_unloaded').at(-1)).toMatchObject({ instanceId: lru, data: { reason: 'evicted' } });
  });

  it('never evicts a pinned or a busy instance: the load is refused, saying what holds the room', async () => {
    const { rig: r } = await start({ maxModels: 1 });
    const small = await r.launch(SMALL);
    r.node.setResidency(small, { pin: true });
    const pinned = await r.client.chat.completions.create({ model: MEDIUM, messages: hi }).catch((e: unknown) => e);
    expect(pinned).toMatchObject({ status: 503, code: 'model_does_not_fit' });
    expect((pinned as APIError).error).toMatchObject({
      message: `sim/llama-3.2-3b cannot load: at most 1 model may be resident (onDemand.maxModels); nothing else can unload (sim/llama-3.2-1b (${small}) is pinned)`,
    });
    r.node.setResidency(small, { pin: false });
    const busy = r.client.chat.completions.create({ model: SMALL, messages: hi, max_tokens: 300 });
    await eventually(() => instancesOf(r, SMALL)[0]?.queue.requests.length, 5000, 'the 1B busy');
    const whileBusy = await r.client.chat.completions.create({ model: MEDIUM, messages: hi }).catch((e: unknown) => e);
    expect((whileBusy as APIError).message).toMatch(/nothing else can unload \(sim\/llama-3\.2-1b \(.+\) is busy\)/);
    await busy;
    expect(instancesOf(r).map((i) => i.id)).toEqual([small]);
    // Idle and unpinned now: it makes room.
    await r.client.chat.completions.create({ model: MEDIUM, messages: hi, max_tokens: 1 });
    expect(instancesOf(r).map((i) => i.model)).toEqual([MEDIUM]);
  });
});
