/**
 * Attach mode through the control API of a real `exobar serve` process, against the
 * fake exo over real HTTP: `--exo URL`, the snapshot's exo section, exo instances
 * beside local ones and exo warnings in /api/state; probe, attach (tested first,
 * saved), detach; and the offer of an exo found on this Mac, never attached silently.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotSchema, type Snapshot } from '../../../../shared/snapshot';
import { startServe, type ServeProcess } from '../../../../test/support/e2e/serve-process';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { startFakeExo, type FakeExo, LLAMA_1B, LLAMA_3B, QWEN_30B, demoCluster } from '../../../../test/support/fake-exo';
import { eventually, sleep } from '../../../../test/support/eventually';

async function call(serve: { url: string; token: string }, method: string, path: string, body?: unknown, token = serve.token) {
  const response = await fetch(`${serve.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  return { status: response.status, body: (await response.json()) as any };
}

const state = async (serve: { url: string; token: string }): Promise<Snapshot> => SnapshotSchema.parse((await call(serve, 'GET', '/api/state')).body);

describe('exobar serve --exo URL', () => {
  let fake: FakeExo;
  let serve: ServeProcess;
  beforeAll(async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    serve = await startServe({ simTimeScale: 0.1, args: ['--exo', fake.url] });
  });
  afterAll(async () => {
    await serve?.stop();
    await fake?.close();
  });

  it('shows the exo cluster in /api/state beside the local instances, with its warnings', async () => {
    const created = await call(serve, 'POST', '/api/instances?wait=ready', { model: 'sim/llama-3.2-1b' });
    expect(created.status).toBe(201);
    const snapshot = await eventually(
      async () => {
        const s = await state(serve);
        return s.exo?.connected && s.instances.length === 4 ? s : null;
      },
      30_000,
      'the exo cluster in /api/state',
    );
    expect(serve.output()).toContain(`attached to exo at ${fake.url}`);
    expect(snapshot.exo).toMatchObject({ url: fake.url, connected: true, nodeId: fake.cluster.nodeId, pollErrors: 0 });
    expect(snapshot.exo!.nodes.map((n) => n.name)).toEqual(['studio-a', 'mini-b']);
    expect(snapshot.instances.map((i) => [i.source, i.model])).toEqual([
      ['local', 'sim/llama-3.2-1b'],
      ['exo', LLAMA_1B],
      ['exo', LLAMA_3B],
      ['exo', QWEN_30B],
    ]);
    expect(snapshot.warnings.map((w) => w.code).sort()).toEqual(['exo_runner_failed', 'two_ring_fast_synch']);
    expect(snapshot.warnings.find((w) => w.code === 'two_ring_fast_synch')!.assumed).toBe(true);
    expect(snapshot.exoOffer).toBeNull();
    // "Stop all" stops this node's runners only: exo's instances are exo's.
    const stopped = await call(serve, 'DELETE', '/api/instances');
    expect(stopped).toMatchObject({ status: 200, body: { deleted: [created.body.id] } });
  });

  it('probes an address without attaching, and says clearly when nothing exo-like answers', async () => {
    expect((await call(serve, 'GET', `/api/exo/probe?url=${encodeURIComponent(fake.url)}`)).body).toEqual({
      ok: true,
      url: fake.url,
      nodeId: fake.cluster.nodeId,
      nodes: 2,
    });
    // The server's own address answers HTTP, but not as exo does.
    const notExo = await call(serve, 'GET', `/api/exo/probe?url=${encodeURIComponent(serve.url)}`);
    expect(notExo.body).toMatchObject({ ok: false, url: serve.url });
    expect(notExo.body.error).toMatch(/node_id/);
    expect((await call(serve, 'GET', '/api/exo/probe')).status).toBe(400);
    expect((await call(serve, 'GET', `/api/exo/probe?url=x`, undefined, 'wrong-token')).status).toBe(401);
  });

  it('refuses to attach where nothing exo-like answers, and stays attached to the exo it has', async () => {
    const refused = await call(serve, 'POST', '/api/exo/attach', { url: serve.url });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatchObject({ code: 'exo_not_found' });
    expect(refused.body.error.message).toContain(`nothing exo-like answers at ${serve.url}`);
    const malformed = await call(serve, 'POST', '/api/exo/attach', { url: 'ftp://nowhere' });
    expect(malformed).toMatchObject({ status: 400, body: { error: { code: 'invalid_exo_url' } } });
    expect((await call(serve, 'POST', '/api/exo/attach', { address: fake.url })).status).toBe(400);
    expect((await state(serve)).exo?.url).toBe(fake.url);
  });

  it('detaches (the exo part leaves the snapshot), then attaches again and saves exo.url', async () => {
    expect((await call(serve, 'POST', '/api/exo/detach')).body).toEqual({ detached: true, url: fake.url });
    const detached = await state(serve);
    expect(detached.exo).toBeNull();
    expect(detached.instances.filter((i) => i.source === 'exo')).toEqual([]);
    expect(detached.warnings).toEqual([]);

    const attached = await call(serve, 'POST', '/api/exo/attach', { url: `${fake.url}/` });
    expect(attached).toMatchObject({ status: 200, body: { attached: true, ok: true, url: fake.url, nodeId: fake.cluster.nodeId } });
    const settings = JSON.parse(await readFile(join(serve.dataDir, 'settings.json'), 'utf8')) as { exo: { url: string | null } };
    expect(settings.exo.url).toBe(fake.url);
    await eventually(async () => (await state(serve)).instances.filter((i) => i.source === 'exo').length === 3, 15_000, 'exo instances after attaching again');
  });
});

describe('the offer of an exo found on this Mac', () => {
  let fake: FakeExo | null = null;
  let rig: CoreRig | null = null;
  afterEach(async () => {
    await rig?.close();
    await fake?.close();
    rig = null;
    fake = null;
  });

  it('is offered at start when nothing is set, never attached silently, and accepted by attaching to it', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    rig = await startCoreRig({ exo: { offerUrl: fake.url, exoLogDir: null } });
    const offered = await eventually(() => rig!.node.snapshot().exoOffer, 10_000, 'the offer');
    expect(offered).toMatchObject({ url: fake.url, nodeId: fake.cluster.nodeId });
    const before = rig.node.snapshot();
    expect(before.exo).toBeNull();
    expect(before.instances).toEqual([]);
    expect(fake.hits.get('/state/tasks') ?? 0).toBe(0);

    const accepted = await rig.control('POST', '/api/exo/attach', { url: offered.url });
    expect(accepted.status).toBe(200);
    const after = await eventually(
      () => {
        const s = rig!.node.snapshot();
        return s.exo?.connected ? s : null;
      },
      10_000,
      'attached',
    );
    expect(after.exoOffer).toBeNull();
    expect(after.instances.filter((i) => i.source === 'exo')).toHaveLength(3);
  });

  it('is not offered when nothing answers there', async () => {
    fake = await startFakeExo({ cluster: demoCluster() });
    const gone = fake.url;
    await fake.close();
    fake = null;
    rig = await startCoreRig({ exo: { offerUrl: gone, exoLogDir: null } });
    await sleep(1_500);
    expect(rig.node.snapshot()).toMatchObject({ exo: null, exoOffer: null });
  });
});
