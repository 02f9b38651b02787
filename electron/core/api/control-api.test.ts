/**
 * The control API against the real node with sim runners: the token, the snapshot
 * (once and streamed), instances with the fast-synch 409 gate, the catalog.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Snapshot } from '../../../shared/snapshot';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';

const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
let rig: CoreRig;
let smallId: string;

beforeAll(async () => {
  rig = await startCoreRig({ simTimeScale: 0.1 });
  smallId = await rig.launch(SMALL);
});

afterAll(async () => {
  await rig?.close();
});

/** Reads `/api/events` until `count` snapshots arrived (or `until` holds), then aborts. */
async function readEvents(count: number, during?: () => Promise<void>): Promise<{ snapshots: Snapshot[]; raw: string }> {
  const controller = new AbortController();
  const response = await fetch(`${rig.url}/api/events`, { headers: { Authorization: `Bearer ${rig.token}` }, signal: controller.signal });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const snapshots: Snapshot[] = [];
  let triggered = false;
  while (snapshots.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    const messages = raw.split('\n\n');
    snapshots.length = 0;
    for (const message of messages.slice(0, -1)) if (message.startsWith('data: ')) snapshots.push(JSON.parse(message.slice(6)));
    if (!triggered && snapshots.length >= 1 && during) {
      triggered = true;
      void during();
    }
  }
  controller.abort();
  return { snapshots, raw };
}

describe('the token', () => {
  it('401 without a token, with a wrong one, or with another scheme; never from the query string', async () => {
    const none = await rig.control('GET', '/api/state', undefined, { Authorization: '' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('missing_token');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await rig.control('GET', '/api/state', undefined, { Authorization: `Bearer ${rig.token}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_token');
    const basic = await rig.control('GET', '/api/state', undefined, { Authorization: `Basic ${rig.token}` });
    expect(basic.status).toBe(401);
    const query = await fetch(`${rig.url}/api/events?token=${rig.token}`);
    expect(query.status).toBe(401);
    await query.body?.cancel();
  });

  it('a refusal says where the token is (the real token file), never the token', async () => {
    const file = `${rig.core.dataDir}/token`;
    for (const headers of [{ Authorization: '' }, { Authorization: `Bearer ${rig.token}x` }]) {
      const refused = await rig.control('GET', '/api/state', undefined, headers);
      expect(refused.status).toBe(401);
      expect(refused.body.error.tokenFile).toBe(file);
      expect(refused.body.error.message).toContain(`the token is in ${file}`);
      expect(JSON.stringify(refused.body)).not.toContain(rig.token);
    }
  });

  it('writes the generated token to <dataDir>/token with mode 0600', async () => {
    const { readFile, stat } = await import('node:fs/promises');
    const file = `${rig.core.dataDir}/token`;
    expect((await readFile(file, 'utf8')).trim()).toBe(rig.token);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });
});

describe('state, events and catalog', () => {
  it('GET /api/state is the snapshot, with the API base URL', async () => {
    const state = await rig.control('GET', '/api/state');
    expect(state.status).toBe(200);
    expect(state.body.apiBaseUrl).toBe(`${rig.url}/v1`);
    expect(state.body.instances.map((i: { id: string }) => i.id)).toEqual([smallId]);
    expect(state.body.instances[0].runner.status.kind).toBe('RunnerReady');
  });

  it('GET /api/events sends a snapshot at once, then one on change', async () => {
    const { snapshots } = await readEvents(3, async () => {
      await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    });
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    expect(snapshots[0]!.instances[0]!.id).toBe(smallId);
    // Sequence numbers only grow.
    for (let i = 1; i < snapshots.length; i++) expect(snapshots[i]!.seq).toBeGreaterThan(snapshots[i - 1]!.seq);
  });

  it('GET /api/models is the catalog', async () => {
    const models = await rig.control('GET', '/api/models');
    expect(models.status).toBe(200);
    expect(models.body.models.map((m: { id: string }) => m.id)).toEqual(expect.arrayContaining([SMALL, MEDIUM]));
  });
});

describe('instances', () => {
  it('creates (201 with the id), refuses a second ring with fast synch on (409) unless the risk is acknowledged, changes and deletes', async () => {
    const gated = await rig.control('POST', '/api/instances', { model: MEDIUM, instanceType: 'ring', fastSynch: 'on' });
    expect(gated.status).toBe(409);
    expect(gated.body.error.code).toBe('fast_synch_shared_gpu');
    expect(gated.body.error.message).toMatch(/acknowledgeRisk/);

    const created = await rig.control('POST', '/api/instances', { model: MEDIUM, instanceType: 'ring', fastSynch: 'on', acknowledgeRisk: true });
    expect(created.status).toBe(201);
    expect(created.body.id).toBe(created.body.instance.id);
    expect(created.body.instance).toMatchObject({ model: MEDIUM, instanceType: 'ring', fastSynch: { override: 'on', enabled: true } });
    const id = created.body.id as string;
    const warned = await rig.control('GET', '/api/state');
    expect(warned.body.warnings.map((w: { code: string }) => w.code)).toContain('two_ring_fast_synch');

    const pids = async () => {
      const state = await rig.control('GET', '/api/state');
      return Object.fromEntries(state.body.instances.map((i: { id: string; runner: { pid: number } }) => [i.id, i.runner.pid]));
    };
    await rig.node.waitForReady(id);
    const before = await pids();
    // Turning fast synch off only lowers the risk: no acknowledgement asked.
    const changed = await rig.control('PATCH', `/api/instances/${id}`, { fastSynch: 'off', mode: 'cancel' });
    expect(changed.status).toBe(200);
    expect(changed.body.instance.fastSynch).toMatchObject({ override: 'off', enabled: false });
    await rig.node.waitForReady(id);
    const after = await pids();
    // That runner was relaunched with the new environment; the other one was not touched.
    expect(after[id]).not.toBe(before[id]);
    expect(after[smallId]).toBe(before[smallId]);
    const cleared = await rig.control('GET', '/api/state');
    expect(cleared.body.warnings.map((w: { code: string }) => w.code)).not.toContain('two_ring_fast_synch');
    expect(cleared.body.instances.find((i: { id: string }) => i.id === id).fastSynch.reported).toBe(false);

    const deleted = await rig.control('DELETE', `/api/instances/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, deleted: true });
    const again = await rig.control('DELETE', `/api/instances/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('instance_not_found');
  });

  it('a launch of a model that runs answers with the running instance (200, reused); a second one only with duplicate: true', async () => {
    const before = (await rig.control('GET', '/api/state')).body.instances.length as number;
    const again = await rig.control('POST', '/api/instances', { model: SMALL });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: smallId, reused: true, state: 'serving', instance: { id: smallId, model: SMALL } });
    expect((await rig.control('GET', '/api/state')).body.instances).toHaveLength(before);

    // Asked as another instance type: neither reused as the wrong type nor silently doubled.
    const otherType = await rig.control('POST', '/api/instances', { model: SMALL, instanceType: 'jaccl' });
    expect(otherType.status).toBe(409);
    expect(otherType.body.error.code).toBe('model_already_running');
    expect(otherType.body.error.message).toMatch(/duplicate/);

    const second = await rig.control('POST', '/api/instances', { model: SMALL, duplicate: true });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ reused: false, state: 'loading', instance: { model: SMALL } });
    expect(second.body.id).not.toBe(smallId);
    expect((await rig.control('GET', '/api/state')).body.instances).toHaveLength(before + 1);
    // With two running, a plain launch still answers (with the one that serves) and starts nothing.
    const third = await rig.control('POST', '/api/instances', { model: SMALL });
    expect(third.status).toBe(200);
    expect(third.body.id).toBe(smallId);
    expect((await rig.control('DELETE', `/api/instances/${second.body.id}?confirm=1`)).status).toBe(200);
  });

  it('400 for invalid bodies, saying what was wrong; 404 for an unknown instance', async () => {
    const unknownField = await rig.control('POST', '/api/instances', { model: SMALL, colour: 'blue' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.message).toMatch(/colour/);
    const badType = await rig.control('POST', '/api/instances', { model: SMALL, instanceType: 'mesh' });
    expect(badType.status).toBe(400);
    expect(badType.body.error.param).toBe('instanceType');
    const unknownModel = await rig.control('POST', '/api/instances', { model: 'nope/model' });
    expect(unknownModel.status).toBe(404);
    expect(unknownModel.body.error.code).toBe('model_not_found');
    const badPatch = await rig.control('PATCH', `/api/instances/${smallId}`, { fastSynch: 'maybe' });
    expect(badPatch.status).toBe(400);
    const missing = await rig.control('PATCH', '/api/instances/nope-9', { fastSynch: 'off' });
    expect(missing.status).toBe(404);
    const badId = await rig.control('DELETE', '/api/instances/a%20b');
    expect(badId.status).toBe(400);
    expect(badId.body.error.code).toBe('invalid_instance_id');
  });
});

describe('endpoints of other parts of the core', () => {
  it('serves the safe launch plan behind the token', async () => {
    expect((await rig.control('GET', '/api/launch/safe-pair', undefined, { Authorization: '' })).status).toBe(401);
    const plan = await rig.control('GET', '/api/launch/safe-pair');
    expect(plan.status).toBe(200);
    expect(plan.body.models.map((m: { model: string }) => m.model)).toEqual([SMALL, MEDIUM]);
  });
});

describe('stopping a model with requests in flight', () => {
  it('answers 409 requests_in_flight with the count unless confirmed (body or ?confirm=1), for one model and for all', async () => {
    const id = await rig.launch(MEDIUM);
    const response = await fetch(`${rig.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MEDIUM, messages: [{ role: 'user', content: 'tell me a long story' }], max_tokens: 100_000, stream: true }),
    });
    expect(response.status).toBe(200);
    // A reply long enough (minutes at this time scale) to be in flight through every refusal below, however slow the machine.
    const held = () => rig.node.snapshot().instances.find((i) => i.id === id)?.queue.requests.length ?? 0;
    await vi.waitFor(() => expect(held()).toBe(1), { timeout: 30_000 });

    const one = await rig.control('DELETE', `/api/instances/${id}`);
    expect(one.status).toBe(409);
    expect(one.body.error).toMatchObject({ code: 'requests_in_flight', type: 'conflict_error', param: 'confirm', requests: 1 });
    expect(one.body.error.message).toMatch(/^1 request will end/);
    const all = await rig.control('DELETE', '/api/instances');
    expect(all.status).toBe(409);
    expect(all.body.error).toMatchObject({ code: 'requests_in_flight', requests: 1 });
    const notConfirmed = await rig.control('DELETE', `/api/instances/${id}?confirm=0`);
    expect(notConfirmed.status).toBe(409);
    const badBody = await rig.control('DELETE', `/api/instances/${id}`, { confirm: 'yes' });
    expect(badBody.status).toBe(400);
    // Nothing was stopped by the refusals: the request is still in flight.
    expect(held()).toBe(1);

    const confirmed = await rig.control('DELETE', `/api/instances/${id}`, { confirm: true });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ id, deleted: true });
    // The stream the stop ended says why.
    expect(await response.text()).toMatch(/instance_deleted/);
    const rest = await rig.control('DELETE', '/api/instances?confirm=1');
    expect(rest.status).toBe(200);
    expect(rest.body.deleted).toContain(smallId);
  });
});
