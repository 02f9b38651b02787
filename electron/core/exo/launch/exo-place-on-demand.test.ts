/**
 * Placing on demand on an attached exo (`exo.placeOnDemand` on), through the official
 * `openai` client against the serving fake exo (its placement, instance creation and
 * runner loading as exo 0.3.70 does them), with the real core:
 *
 * - five concurrent requests for a model exo has downloaded but not placed are held,
 *   exobar places it once (one instance, on the Mac placement picks), each is then
 *   answered, their TTFT with the `load` part; the instance is deleted after its idle
 *   time to live, and the load and the unload are rows of the request log and events of
 *   the node's log; an instance someone else placed on the same cluster stays;
 * - the gates answer in words: a Mac's memory less headroom, the fast-synch gate (a ring
 *   instance beside another on one Mac with fast synch assumed on), exo's own refusal;
 *   nothing is placed then.
 */
import OpenAI, { APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../../../shared/api';
import type { ModelEventRecord, RequestRecord } from '../../../../shared/request-record';
import type { EventLog } from '../../node/event-log';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { FakeExoCluster, startFakeDownload, modelCard, LLAMA_1B, LLAMA_3B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';

const GB = 1024 ** 3;
const hi = [{ role: 'user' as const, content: 'hi' }];
let exo: ServingExo | null = null;
let rig: CoreRig | null = null;

afterEach(async () => {
  await rig?.close();
  await exo?.close();
  rig = exo = null;
});

interface Setup {
  /** Macs: name and memory. */
  macs: Array<{ name: string; ramGb: number }>;
  /** Instances someone else placed before exobar attached: model on Mac, ready. */
  placed?: Array<{ model: string; mac: string }>;
  ttlSeconds?: number;
  placeOnDemand?: boolean;
}

async function start(setup: Setup): Promise<{ exo: ServingExo; rig: CoreRig; settings: Settings }> {
  const cluster = new FakeExoCluster();
  for (const mac of setup.macs) cluster.addNode(mac);
  for (const p of setup.placed ?? []) cluster.addInstance({ model: p.model, nodes: [p.mac], ready: true });
  exo = await startServingExo({ cluster, loadStepMs: 20, timeScale: 0.2 });
  startFakeDownload(exo.cluster, setup.macs[0]!.name, LLAMA_3B, 2 * GB).complete();
  const settings: Settings = defaultSettings();
  settings.exo.placeOnDemand = setup.placeOnDemand ?? true;
  settings.onDemand.idleTtlSeconds = setup.ttlSeconds ?? 1800;
  rig = await startCoreRig({
    exoUrl: exo.url,
    getSettings: () => settings,
    exo: { offerUrl: null, exoLogDir: null, placer: { reapIntervalMs: 100, pollMs: 50, readyTimeoutMs: 30_000 } },
  });
  const core = rig;
  await eventually(
    () => core.node.snapshot().exo?.nodes.some((n) => n.downloads.some((d) => d.modelId === LLAMA_3B && d.status === 'completed')),
    15_000,
    'the completed download in the snapshot',
  );
  return { exo, rig, settings };
}

const modelEvents = async (r: CoreRig): Promise<ModelEventRecord[]> =>
  ((await r.control('GET', '/api/requests')).body as { events: ModelEventRecord[] }).events;
const instancesOf = (e: ServingExo, model: string) => [...e.cluster.instances.values()].filter((i) => i.modelId === model);
/** The error a request is answered with (a request answered instead fails the test). */
const refusalOf = (r: CoreRig, model: string): Promise<APIError> =>
  r.client.chat.completions.create({ model, messages: hi, max_tokens: 2 }).then(
    () => {
      throw new Error(`${model} was answered, not refused`);
    },
    (e: unknown) => e as APIError,
  );
const refusal = (r: CoreRig) => refusalOf(r, LLAMA_3B);

describe('exo.placeOnDemand on', () => {
  it('holds five concurrent requests while it places the model once, serves them, and deletes only its own instance after the time to live', async () => {
    const { exo, rig, settings } = await start({
      macs: [
        { name: 'studio-a', ramGb: 64 },
        { name: 'studio-b', ramGb: 16 },
      ],
      // Someone else's instance on the smaller Mac: placement picks the Mac with the most memory.
      placed: [{ model: LLAMA_1B, mac: 'studio-b' }],
      ttlSeconds: 2,
    });
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(0);
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        i === 0
          ? rig.client.chat.completions.create({ model: LLAMA_3B, messages: hi, max_tokens: 4, stream: true }).then(async (stream) => {
              let text = '';
              for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
              return text;
            })
          : rig.client.chat.completions.create({ model: LLAMA_3B, messages: hi, max_tokens: 4 }).then((a) => a.choices[0]!.message.content ?? ''),
      ),
    );
    for (const text of answers) expect(text.length).toBeGreaterThan(0);
    // One placement for the five, a ring on the larger Mac.
    const placed = instancesOf(exo, LLAMA_3B);
    expect(placed).toHaveLength(1);
    expect(placed[0]!.kind).toBe('MlxRingInstance');
    expect(placed[0]!.shards.map((s) => exo.cluster.nodes.find((n) => n.id === s.nodeId)?.name)).toEqual(['studio-a']);
    const exoInstanceId = placed[0]!.id;

    // Each answer's TTFT has its load part first.
    await eventually(
      () => rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B)?.ttft.samples.length === 5,
      10_000,
      'five TTFT samples on the exo instance',
    );
    const samples = rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B)!.ttft.samples;
    for (const s of samples) {
      expect(s.loadMs).toBeGreaterThan(0);
      expect(s.loadMs! + s.waitMs + s.prefillMs + s.firstTokenMs).toBeCloseTo(s.totalMs, 0);
    }
    // The request log keeps each request's load part.
    const logged = await eventually(
      async () => {
        const list = (await rig.control('GET', `/api/requests?model=${encodeURIComponent(LLAMA_3B)}`)).body as { requests: RequestRecord[] };
        return list.requests.length === 5 ? list.requests : null;
      },
      10_000,
      'five requests in the log',
    );
    for (const r of logged) expect(r).toMatchObject({ source: 'exo', outcome: 'done', loadMs: expect.any(Number) });
    const load = (await modelEvents(rig)).find((e) => e.event === 'load' && e.model === LLAMA_3B);
    expect(load).toMatchObject({ instance: exoInstanceId, reason: 'placed on exo on demand for a request' });
    expect(load!.durationMs).toBeGreaterThan(0);
    // Runners load layer by layer, 7 steps of 20 ms at the least.
    expect(load!.durationMs).toBeGreaterThanOrEqual(100);
    // The first request to arrive waited for the whole placement (later ones joined it under way).
    expect(Math.max(...samples.map((s) => s.loadMs!))).toBeGreaterThanOrEqual(load!.durationMs! - 50);

    // Idle past its 2 s: exobar deletes what it placed, never the instance someone else placed.
    await eventually(() => instancesOf(exo, LLAMA_3B).length === 0, 15_000, 'the placed instance deleted after its time to live');
    expect(instancesOf(exo, LLAMA_1B)).toHaveLength(1);
    const others = rig.node.snapshot().instances.find((i) => i.model === LLAMA_1B);
    expect(others?.source === 'exo' && others.exo.placedOnDemand).toBeFalsy();
    const unload = await eventually(
      async () => (await modelEvents(rig)).find((e) => e.event === 'unload' && e.model === LLAMA_3B),
      5_000,
      'the unload in the request log',
    );
    expect(unload).toMatchObject({ instance: exoInstanceId });
    expect(unload!.reason).toMatch(/^deleted on exo, idle \d+ s$/);
    // The node's event log (the bundle's events.jsonl): createNode's node has it.
    const kinds = (rig.core.node as unknown as { eventLog: EventLog }).eventLog.all().map((e) => e.kind);
    expect(kinds).toContain('exo_model_placed');
    expect(kinds).toContain('exo_model_deleted');
    // The setting off again: the next request is told how to place it, and nothing is placed.
    settings.exo.placeOnDemand = false;
    await eventually(() => !rig.node.snapshot().instances.some((i) => i.model === LLAMA_3B), 10_000, 'the deleted instance gone from the snapshot');
    const off = await refusal(rig);
    expect(off).toBeInstanceOf(OpenAI.NotFoundError);
    expect(off.code).toBe('model_not_placed');
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(0);
  }, 60_000);

  it('refuses, in words, a ring instance beside another on one Mac while fast synch is on (assumed: exo does not publish it)', async () => {
    const { exo, rig } = await start({ macs: [{ name: 'studio-a', ramGb: 64 }], placed: [{ model: LLAMA_1B, mac: 'studio-a' }] });
    const refused = await refusal(rig);
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect(refused.code).toBe('fast_synch_shared_gpu');
    expect(refused.message).toContain(`${LLAMA_3B} was not placed: it would share studio-a's GPU as a ring instance with ${LLAMA_1B}`);
    expect(refused.message).toContain('assumed: exo does not publish it');
    expect(refused.message).toContain('EXO_FAST_SYNCH=false');
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(0);
    const refusedEvent = (await modelEvents(rig)).find((e) => e.event === 'load_refused');
    expect(refusedEvent?.reason).toContain('was not placed');
  }, 30_000);

  it("refuses a Mac whose available memory less headroom is too small, and says exo's own placement refusal", async () => {
    const size = Number((modelCard(LLAMA_3B).storageSize as { inBytes: number }).inBytes);
    // 80% of total is available: enough for exo's placement, not with exobar's 2 GiB headroom.
    const ramGb = Math.ceil(((size + 1 * GB) / 0.8 / GB) * 10) / 10;
    const { exo, rig } = await start({ macs: [{ name: 'mini', ramGb }] });
    const refused = await refusal(rig);
    expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
    expect(refused.status).toBe(503);
    expect(refused.code).toBe('model_does_not_fit');
    expect(refused.message).toMatch(
      new RegExp(`${LLAMA_3B} was not placed: mini has [\\d.]+ GiB available, and ${LLAMA_3B} needs [\\d.]+ GiB there plus 2.0 GiB headroom$`),
    );
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(0);

    // Less memory than the model: exo's placement itself refuses, in its words.
    exo.cluster.node('mini').ramAvailable = size / 2;
    const placement = await refusal(rig);
    expect(placement.status).toBe(503);
    expect(placement.message).toContain(`exo cannot place ${LLAMA_3B}: No cycles found with sufficient memory`);
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(0);
  }, 30_000);

  it('shows the held request as loading beside the runners loading, and a runner that fails deletes what exobar created', async () => {
    const { exo, rig } = await start({ macs: [{ name: 'studio-a', ramGb: 64 }] });
    exo.placement.holdLoading = true;
    // keep_alive (Ollama's, seconds) sets the time to live of what exobar places.
    const answer = rig.client.chat.completions.create({ model: LLAMA_3B, messages: hi, max_tokens: 2, keep_alive: 600 } as never);
    const card = await eventually(
      () => rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B && i.source === 'exo' && i.queue.requests.length > 0),
      10_000,
      'the placed instance with the held request',
    );
    expect(card.queue.requests.map((r) => r.phase)).toEqual(['loading']);
    expect(instancesOf(exo, LLAMA_3B)).toHaveLength(1);
    exo.placement.holdLoading = false;
    expect(((await answer) as OpenAI.ChatCompletion).choices[0]!.message.content!.length).toBeGreaterThan(0);
    // The snapshot says exobar placed it, with the request's time to live.
    const placedCard = await eventually(
      () => {
        const found = rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B && i.source === 'exo');
        return found?.source === 'exo' && found.exo.placedOnDemand?.unloadsAt ? found.exo.placedOnDemand : null;
      },
      10_000,
      'the placed instance marked as placed on demand',
    );
    expect(placedCard.ttlSeconds).toBe(600);
    expect(placedCard.unloadsAt! - Date.now()).toBeGreaterThan(590_000);
    // Someone deletes it on exo: exobar only forgets it (and a second ring on the Mac is no longer in the way).
    const deleted = await fetch(`${exo.url}/instance/${instancesOf(exo, LLAMA_3B)[0]!.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    await eventually(() => !rig.node.snapshot().instances.some((i) => i.model === LLAMA_3B), 10_000, 'the deleted instance gone');

    // Another model whose runner fails while loading: the request says why, and the instance exobar created is deleted.
    startFakeDownload(exo.cluster, 'studio-a', 'mlx-community/Mistral-7B-Instruct-v0.3-4bit', 4 * GB).complete();
    await eventually(
      () => rig.node.snapshot().exo?.nodes.some((n) => n.downloads.some((d) => d.modelId.includes('Mistral') && d.status === 'completed')),
      10_000,
      'the second download',
    );
    exo.placement.failNextLoad('out of memory while loading layer 3');
    const failed = await refusalOf(rig, 'mlx-community/Mistral-7B-Instruct-v0.3-4bit');
    expect(failed.status).toBe(503);
    expect(failed.code).toBe('launch_failed');
    expect(failed.message).toContain('failed while loading: out of memory while loading layer 3');
    await eventually(() => instancesOf(exo, 'mlx-community/Mistral-7B-Instruct-v0.3-4bit').length === 0, 5_000, 'the failed instance deleted');
  }, 30_000);
});
