/**
 * The `exo.hold` setting as the core reads it, against the serving fake exo's blocking
 * worker: with the hold off a second request to a prefilling model goes to exo at once
 * and stalls the other model (exo_dispatch_stall says the hold is off); turning it back
 * on holds the next one in exobar's queue, and off again sends the held one at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../../../shared/api';
import { streamChatText, LLAMA_1B, LLAMA_3B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { eventually } from '../../../../test/support/eventually';

let exo: ServingExo;
let rig: CoreRig;
const settings: Settings = defaultSettings();
const controller = new AbortController();

beforeAll(async () => {
  exo = await startServingExo({ mode: 'blocking', timeScale: 0.25 });
  rig = await startCoreRig({
    exoUrl: exo.url,
    getSettings: () => settings,
    exo: { offerUrl: null, exoLogDir: null, stallThresholds: { dispatchStallMs: 300 } },
  });
  await eventually(() => rig.node.snapshot().instances.length === 2, 10_000, 'the exo instances');
});

afterAll(async () => {
  controller.abort();
  await rig?.close();
  await exo?.close();
});

const send = (model: string, tokens: number, salt: string) => streamChatText(rig.url, model, tokens, salt, controller.signal);
const card = (model: string) => rig.node.snapshot().instances.find((i) => i.model === model);

describe('the exo.hold setting', () => {
  it('off: the second request goes to exo and the other model stalls; on again: the next one is held; off: it goes', async () => {
    settings.exo.hold = false;
    void send(LLAMA_3B, 60_000, 'long');
    await eventually(() => card(LLAMA_3B)?.prefill, 10_000, 'the long prefill');
    void send(LLAMA_3B, 50, 'second');
    await eventually(() => exo.worker.openCommands().length === 2, 5000, 'exo to have the second request');
    expect(card(LLAMA_3B)!.queue.requests.some((r) => r.phase === 'queued')).toBe(false);
    void send(LLAMA_1B, 50, 'short');
    await eventually(() => rig.node.snapshot().warnings.some((w) => w.code === 'exo_dispatch_stall'), 10_000, 'exo_dispatch_stall');
    expect(rig.node.snapshot().warnings.find((w) => w.code === 'exo_dispatch_stall')!.risk).toContain('hold is off');

    settings.exo.hold = true;
    void send(LLAMA_3B, 50, 'third');
    await eventually(
      () => card(LLAMA_3B)?.queue.requests.some((r) => r.phase === 'queued' && r.id.startsWith('exobar-')),
      5000,
      'the third request held by exobar',
    );
    expect(exo.worker.openCommands()).toHaveLength(3);
    // Turned off while one is held: it goes to exo now, not at the prefill's end.
    settings.exo.hold = false;
    await eventually(() => exo.worker.openCommands().length === 4, 5000, 'the held request sent once the hold is off');
  });
});
