/**
 * Against the fake exo's two-node cluster, through the whole core: a Mac whose exo
 * stops takes its models with it and exobar says so (events, exo_model_lost), Place
 * again re-places a model on the Mac that remains (fewer Macs, or a refusal naming the
 * memory each Mac lacks) and clears its warning (behind the fast-synch gate), and a
 * model deleted through exobar is an event but no warning.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../../shared/snapshot';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { readZip } from '../../../../test/support/diagnostics/read-zip';
import { STOPPED_NODE_REMOVAL_MS, TINY, TINY_B, twoNodeCluster, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';

const lostWarnings = (s: Snapshot) => s.warnings.filter((w) => w.code === 'exo_model_lost');
const kinds = (s: Snapshot) => (s.exo?.events ?? []).map((e) => `${e.kind}${e.model ? ` ${e.model}` : ''}${e.cause ? ` (${e.cause})` : ''}`);

describe('a Mac that leaves the fake exo cluster', () => {
  const clock = { offset: 0 };
  let exo: ServingExo;
  let rig: CoreRig;
  const snap = () => rig.node.snapshot();

  beforeAll(async () => {
    exo = await startServingExo({ cluster: twoNodeCluster(() => Date.now() + clock.offset) });
    rig = await startCoreRig({ exoUrl: exo.url, exo: { offerUrl: null, exoLogDir: null } });
    await eventually(() => snap().instances.length === 2, 10_000, 'both models attached');
  }, 30_000);

  afterAll(async () => {
    await rig?.close();
    await exo?.close();
  });

  it('gives studio-b left, both models deleted by exo after it, and a lost-model warning for each', async () => {
    exo.cluster.stopNode('studio-b');
    exo.cluster.step();
    expect(exo.cluster.nodes).toHaveLength(2);
    clock.offset += STOPPED_NODE_REMOVAL_MS;
    exo.cluster.step();
    expect(exo.cluster.nodes.map((n) => n.name)).toEqual(['studio-a']);
    expect([exo.cluster.instances.size, exo.cluster.runners.size, exo.cluster.tasks.size]).toEqual([0, 0, 0]);

    await eventually(() => lostWarnings(snap()).length === 2, 15_000, 'two exo_model_lost warnings');
    expect(kinds(snap())).toEqual(['node_left', `instance_deleted ${TINY} (node_left)`, `instance_deleted ${TINY_B} (node_left)`]);
    const [ring, single] = lostWarnings(snap());
    expect(ring).toMatchObject({ model: TINY, instanceIds: [`exo:${TINY}`] });
    expect(ring!.title).toMatch(/^tiny-llama was lost: studio-b left at \d\d:\d\d$/);
    expect(ring!.risk).toContain('ran on studio-a and studio-b');
    expect(ring!.fix).toContain('ring, Pipeline, 2 Macs');
    expect(single!.title).toMatch(/^tiny-llama-b was lost: studio-b left at/);
    expect(snap().instances).toEqual([]);

    // Both survive in the bundle: the events in exo/events.jsonl, the warnings in snapshot.json.
    const response = await fetch(`${rig.url}/api/diagnostics`, { method: 'POST', headers: { Authorization: `Bearer ${rig.token}` } });
    expect(response.status).toBe(200);
    const dir = await mkdtemp(join(tmpdir(), 'lost-bundle-'));
    try {
      await writeFile(join(dir, 'bundle.zip'), Buffer.from(await response.arrayBuffer()));
      const files = await readZip(join(dir, 'bundle.zip'));
      const events = files
        .get('exo/events.jsonl')!
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; cause: string | null; summary: string });
      expect(events.map((e) => e.kind)).toEqual(['node_left', 'instance_deleted', 'instance_deleted']);
      expect(events[1]!.summary).toMatch(/^tiny-llama deleted by exo after studio-b left at \d\d:\d\d \(it ran on studio-a and studio-b\)$/);
      const bundled = JSON.parse(files.get('snapshot.json')!.toString()) as { warnings: Array<{ code: string; model?: string }> };
      expect(bundled.warnings.filter((w) => w.code === 'exo_model_lost').map((w) => w.model)).toEqual([TINY, TINY_B]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('refuses Place again when the model fits on none of the Macs that remain, naming each and the memory it lacks', async () => {
    const studioA = exo.cluster.nodes.find((n) => n.name === 'studio-a')!;
    const before = studioA.ramAvailable;
    studioA.ramAvailable = 1 * 1024 ** 3;
    try {
      await eventually(async () => (await rig.control('GET', '/api/state')).status === 200, 5000, 'the core answering');
      const answer = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY });
      expect(answer.status).toBe(409);
      expect(answer.body.error.code).toBe('launch_failed');
      const message = answer.body.error.message as string;
      expect(message).toMatch(
        /^exobar\/tiny-llama cannot be placed again on the Mac that remains \(studio-a\): studio-a has 1\.0 GiB available, the whole model needs \d+\.\d GiB plus \d+\.\d GiB headroom \(\d+\.\d GiB missing\)\./,
      );
      expect(message).toContain('it ran on studio-a and studio-b; studio-b left at');
      expect(message).not.toContain('No cycles found');
      expect(lostWarnings(snap())).toHaveLength(2);
    } finally {
      studioA.ramAvailable = before;
    }
  });

  it("places a two-Mac ring again on the Mac that remains (fewer Macs, through exo's placement preview), which clears its warning", async () => {
    const answer = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ model: TINY, nodes: ['studio-a'], alreadyPlaced: false });
    await eventually(() => lostWarnings(snap()).length === 1, 15_000, 'the warning of tiny-llama cleared');
    expect(lostWarnings(snap())[0]!.model).toBe(TINY_B);
    expect(snap().instances.map((i) => i.model)).toEqual([TINY]);
    expect(snap().exo!.events.at(-1)).toMatchObject({ kind: 'instance_placed', model: TINY, cause: 'exobar' });
  }, 30_000);

  it('holds Place again behind the fast-synch gate when the ring would share a Mac with another ring model', async () => {
    const refused = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY_B });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('fast_synch_shared_gpu');
    expect(refused.body.error.message).toContain(`beside ${TINY}`);
    const placed = await rig.control('POST', '/api/exo/lost-models/place-again', { model: TINY_B, acknowledgeRisk: true });
    expect(placed.status).toBe(200);
    expect(placed.body.nodes).toEqual(['studio-a']);
    await eventually(() => lostWarnings(snap()).length === 0, 15_000, 'every lost-model warning cleared');
  }, 30_000);

  it('records a model deleted through exobar as an event, with no lost-model warning', async () => {
    const deleted = await rig.control('DELETE', `/api/instances/${encodeURIComponent(`exo:${TINY_B}`)}`, { confirm: true });
    expect(deleted.status).toBe(200);
    await eventually(() => kinds(snap()).includes(`instance_deleted ${TINY_B} (exobar)`), 15_000, 'the deletion event');
    expect(lostWarnings(snap())).toEqual([]);
  }, 30_000);

  it('dismisses a loss, and answers 404 for a model that is not lost', async () => {
    expect((await rig.control('POST', '/api/exo/lost-models/dismiss', { model: TINY_B })).status).toBe(404);
    expect((await rig.control('POST', '/api/exo/lost-models/place-again', { model: 'nope/nothing' })).body.error.code).toBe('model_not_found');
  });
});
