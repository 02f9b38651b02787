/**
 * startCore applies the settings that shape the node: here the watchdog limits, so an
 * operator can fit them to the slowest model on their Mac.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../shared/api';
import { FAULT_PROMPTS } from '../../shared/runner-protocol';
import { startCoreRig, type CoreRig } from '../../test/support/api-harness';

describe('startCore', () => {
  let rig: CoreRig | undefined;
  afterEach(async () => rig?.close());

  it('gives the node the watchdog limits from settings', async () => {
    // A floor of 10 minutes: only the 1 s ceilings from settings explain a 1 s deadline.
    rig = await startCoreRig({ settings: { ...defaultSettings(), watchdog: { prefillMs: 1000, decodeMs: 1000, floorMs: 600_000 } } });
    await rig.launch('sim/llama-3.2-1b');
    const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const hung = client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: FAULT_PROMPTS.hang }], max_tokens: 5 });
    await expect(hung).rejects.toMatchObject({ status: 503, code: 'runner_stuck', message: expect.stringMatching(/watchdog deadline 1(\.0)? s/) });
  });
});
