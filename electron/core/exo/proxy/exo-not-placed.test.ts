/**
 * On exo with `exo.placeOnDemand` off, through the official `openai` client against the
 * serving fake exo: a request for a model exo has downloaded (DownloadCompleted) but not
 * placed answers 404 saying so and how to place it, is never loaded locally nor sent to
 * exo; a placed model is still served; an ongoing download is not "downloaded".
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings, type Settings } from '../../../../shared/api';
import { localInstances } from '../../../../shared/instance-state';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { startFakeDownload, GPT_OSS_20B, LLAMA_1B, QWEN_30B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';

const GB = 1024 ** 3;
let exo: ServingExo;
let rig: CoreRig;
const settings: Settings = defaultSettings();
const hi = [{ role: 'user' as const, content: 'hi' }];

beforeAll(async () => {
  exo = await startServingExo({ mode: 'blocking', timeScale: 0.25 });
  startFakeDownload(exo.cluster, 'studio-a', QWEN_30B, 17 * GB).complete();
  startFakeDownload(exo.cluster, 'studio-a', GPT_OSS_20B, 12 * GB).progress(3 * GB, 1e8);
  rig = await startCoreRig({ exoUrl: exo.url, getSettings: () => settings, exo: { offerUrl: null, exoLogDir: null } });
  await eventually(
    () => rig.node.snapshot().exo?.nodes.some((n) => n.downloads.some((d) => d.modelId === QWEN_30B && d.status === 'completed')),
    15_000,
    'the completed download in the snapshot',
  );
}, 30_000);

afterAll(async () => {
  await rig?.close();
  await exo?.close();
});

const refusal = (model: string) => rig.client.chat.completions.create({ model, messages: hi, max_tokens: 2 }).catch((e: unknown) => e);

describe('a model exo has downloaded but not placed, exo.placeOnDemand off', () => {
  it('answers 404 that says it is downloaded and not placed, and how to place it with exo placement API', async () => {
    const sentBefore = exo.worker.openCommands().length;
    const refused = await refusal(QWEN_30B);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect(refused).toMatchObject({ status: 404, code: 'model_not_placed', param: 'model' });
    const message = (refused as APIError).message;
    expect(message).toContain(`model '${QWEN_30B}' is downloaded on the attached exo (1 Mac) but not placed`);
    expect(message).toContain('exo.placeOnDemand is off');
    expect(message).toContain(`GET ${exo.url}/instance/placement?model_id=${encodeURIComponent(QWEN_30B)}&sharding=Pipeline&instance_meta=MlxRing`);
    expect(message).toContain(`POST ${exo.url}/instance`);
    // Neither loaded here nor sent to exo, nor placed.
    expect(localInstances(rig.node.snapshot())).toHaveLength(0);
    expect(exo.worker.openCommands()).toHaveLength(sentBefore);
    expect(rig.node.snapshot().instances.some((i) => i.model === QWEN_30B)).toBe(false);
  });

  it('still serves a placed model, and a model exo is still downloading gets the usual unknown-model answer', async () => {
    const answer = await rig.client.chat.completions.create({ model: LLAMA_1B, messages: hi, max_tokens: 2 });
    expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const downloading = await refusal(GPT_OSS_20B);
    expect(downloading).toBeInstanceOf(OpenAI.NotFoundError);
    expect((downloading as APIError).code).toBe('model_not_found');
    expect((downloading as APIError).message).not.toMatch(/downloaded/);
  });
});
