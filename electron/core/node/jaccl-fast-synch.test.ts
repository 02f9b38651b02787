/**
 * Fast synch for a JACCL instance, after MLX's own change (ml-explore/mlx PR #4005: the
 * flag is unreliable "in any cross-stream workload"): on only while the JACCL instance is
 * alone on its GPU. Against the real node with sim runners, through the control API: a
 * model joining a JACCL instance that runs with fast synch on meets the same 409 gate as
 * two ring models, its warning names the JACCL runner, the fix clears it, and a JACCL
 * instance launched beside another model starts with fast synch off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';

const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
let rig: CoreRig;

beforeAll(async () => {
  rig = await startCoreRig({ simTimeScale: 0.1 });
});

afterAll(async () => {
  await rig?.close();
});

interface InstanceRow {
  id: string;
  instanceType: string;
  fastSynch: { enabled: boolean; reason: string };
}

async function instance(id: string): Promise<InstanceRow> {
  const state = await rig.control('GET', '/api/state');
  return (state.body.instances as InstanceRow[]).find((i) => i.id === id)!;
}

async function warningCodes(): Promise<string[]> {
  return ((await rig.control('GET', '/api/state')).body.warnings as Array<{ code: string }>).map((w) => w.code);
}

describe('fast synch for a JACCL instance on a shared GPU', () => {
  it('is on alone, gates a model that joins it, and is off when launched beside another model', async () => {
    const jaccl = await rig.control('POST', '/api/instances?wait=ready', { model: MEDIUM, instanceType: 'jaccl' });
    expect(jaccl.status).toBe(201);
    expect((await instance(jaccl.body.id)).fastSynch).toMatchObject({ enabled: true, reason: 'JACCL instance alone on its GPU' });
    expect(await warningCodes()).toEqual([]);

    // A ring model (fast synch off) beside the JACCL runner that has it on: two models on one GPU with it on.
    const refused = await rig.control('POST', '/api/instances', { model: SMALL });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('fast_synch_shared_gpu');
    expect(refused.body.error.message).toMatch(/^sim\/llama-3\.2-1b would share the GPU with another model while fast synch is on/);

    const ring = await rig.control('POST', '/api/instances?wait=ready', { model: SMALL, acknowledgeRisk: true });
    expect(ring.status).toBe(201);
    const warnings = (await rig.control('GET', '/api/state')).body.warnings as Array<{ code: string; instanceIds: string[]; title: string }>;
    expect(warnings.map((w) => [w.code, w.instanceIds])).toEqual([['ring_fast_synch_beside_jaccl', [jaccl.body.id]]]);
    expect(warnings[0]!.title).toBe('Fast synch is on for sim/llama-3.2-3b while 2 models (ring and JACCL) share the GPU');

    // The warning's fix: the JACCL runner relaunched with fast synch off; nothing to acknowledge.
    const fixed = await rig.control('PATCH', `/api/instances/${jaccl.body.id}`, { fastSynch: 'off', mode: 'cancel' });
    expect(fixed.status).toBe(200);
    expect(await warningCodes()).toEqual([]);

    // Launched beside a running model, a JACCL instance starts with fast synch off by itself.
    expect((await rig.control('DELETE', `/api/instances/${jaccl.body.id}?confirm=1`)).status).toBe(200);
    const beside = await rig.control('POST', '/api/instances?wait=ready', { model: MEDIUM, instanceType: 'jaccl' });
    expect(beside.status).toBe(201);
    expect((await instance(beside.body.id)).fastSynch).toMatchObject({ enabled: false, reason: 'JACCL instance sharing its GPU with another model' });
    expect(await warningCodes()).toEqual([]);
  });
});
