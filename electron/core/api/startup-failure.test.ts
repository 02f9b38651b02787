/**
 * A start-up failure that would repeat, end to end with a real node and a scripted
 * runner process: not retried, the runner's own words in the snapshot and in the API's
 * error, and the operator's retry (POST /api/instances/{id}/retry) starts it anew.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import { startServerRig, type ApiRig } from '../../../test/support/api-harness';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { sleep } from '../../../test/support/eventually';

const FAKE_RUNNER = fileURLToPath(new URL('../../../test/support/fake-runner.mjs', import.meta.url));
const MODEL = 'sim/llama-3.2-1b';
const RUNNER_WORDS = 'model not found: /models/missing (no config.json)';

describe('start-up failures through the API', () => {
  let fixture: NodeFixture;
  let rig: ApiRig;
  afterEach(async () => {
    await rig?.close();
    await fixture?.cleanup();
  });

  it('a missing model fails at once with the runner’s words, is not retried, and the operator’s retry starts it anew', async () => {
    const mode = { value: 'load-fails' };
    fixture = createNodeFixture({}, { runnerCommand: () => ({ command: process.execPath, args: [FAKE_RUNNER, mode.value], env: {} }) });
    rig = await startServerRig(fixture.node);
    const created = await rig.control('POST', '/api/instances?wait=ready', { model: MODEL, instanceType: 'ring' });
    expect(created.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(created.body)).toContain(RUNNER_WORDS);
    await sleep(300);
    const [instance] = localInstances(fixture.node.snapshot());
    expect(instance!.runner).toMatchObject({
      state: 'failed',
      restarts: 0,
      lastExit: { cause: 'startup_failed', message: expect.stringContaining(RUNNER_WORDS) },
    });
    const chat = await rig.control('POST', '/v1/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(chat.body)).toContain(RUNNER_WORDS);

    mode.value = 'ok';
    const retried = await rig.control('POST', `/api/instances/${instance!.id}/retry`);
    expect(retried.status).toBe(202);
    await fixture.node.waitForReady(instance!.id, 10_000);
    expect(localInstances(fixture.node.snapshot())[0]!.runner.state).toBe('ready');
    // Nothing to retry now.
    expect((await rig.control('POST', `/api/instances/${instance!.id}/retry`)).status).toBe(409);
  });

  it('a fast-synch mismatch fails at once, not retried, saying what the runner sees', async () => {
    fixture = createNodeFixture(
      {},
      {
        runnerCommand: () => ({ command: 'sh', args: ['-c', 'export MLX_METAL_FAST_SYNCH=1; exec "$0" "$@"', process.execPath, FAKE_RUNNER, 'ok'], env: {} }),
      },
    );
    rig = await startServerRig(fixture.node);
    const created = await rig.control('POST', '/api/instances?wait=ready', { model: MODEL, instanceType: 'ring' });
    expect(created.status).toBeGreaterThanOrEqual(400);
    expect(created.body).toMatchObject({ error: { code: 'fast_synch_mismatch' } });
    expect(JSON.stringify(created.body)).toContain('MLX_METAL_FAST_SYNCH=1');
    await sleep(300);
    expect(localInstances(fixture.node.snapshot())[0]!.runner).toMatchObject({ state: 'failed', restarts: 0, lastExit: { cause: 'startup_failed' } });
  });
});
