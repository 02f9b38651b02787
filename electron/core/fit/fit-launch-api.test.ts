/**
 * The fit check at the API: a launch that does not fit is refused (409
 * `insufficient_memory`, the figures in `fit`), and `acknowledgeMemory: true` launches
 * it anyway; the same for the safe pair. The real core with sim runners; only the
 * machine's memory readings are replaced, by a Mac with 3 GB free and a 16 GB GPU limit.
 */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startCoreRig } from '../../../test/support/api-harness';
import { fitForLaunch } from './fit-for-launch';
import type { FitChecker } from './fit-gate';

const GiB = 1024 ** 3;
const tightMac: FitChecker = (input) =>
  fitForLaunch({
    ...input,
    readMemory: async () => ({ totalBytes: 24 * GiB, freeBytes: 3 * GiB, source: 'vm_stat' }),
    readGpuLimit: async () => 16 * GiB,
  });

describe('fit check at the API', () => {
  it('refuses a launch that does not fit with the figures, launches it with acknowledgeMemory', async () => {
    const rig = await startCoreRig({ fitChecker: tightMac });
    try {
      // 3B at 8192 tokens: 3.4 GiB of weights + 0.9 GiB of KV cache, against 3 GB free less 2 GB headroom.
      const refused = await rig.control('POST', '/api/instances', { model: 'sim/llama-3.2-3b' });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('insufficient_memory');
      expect(refused.body.error.message).toContain('Not enough memory: needs 4.3 GiB; 3.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.0 GiB usable.');
      expect(refused.body.error.message).toContain('"acknowledgeMemory": true');
      expect(refused.body.error.fit.summary).toBe("needs 4.3 GiB; 3.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.0 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left");
      expect(refused.body.error.fit.risk).toMatch(/swapping/);
      expect(rig.node.snapshot().instances).toHaveLength(0);

      const anyway = await rig.control('POST', '/api/instances?wait=ready', { model: 'sim/llama-3.2-3b', acknowledgeMemory: true });
      expect(anyway.status).toBe(201);
      expect(anyway.body.fit.fits).toBe(false);
      const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const answer = await client.chat.completions.create({ model: 'sim/llama-3.2-3b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
      expect(answer.choices[0]?.finish_reason).toBe('length');

      // A smaller context fits: the 1B at 1024 tokens needs 1.4 GiB.
      const small = await rig.control('POST', '/api/instances', { model: 'sim/llama-3.2-1b', contextTokens: 1024 });
      expect(small.status).toBe(409); // 1.4 GiB > 1.0 GiB left after headroom
      expect(small.body.error.fit.models[0].contextTokens).toBe(1024);
    } finally {
      await rig.close();
    }
  });

  it('the safe pair plan carries the fit check; its POST refuses, then launches anyway', async () => {
    const rig = await startCoreRig({ fitChecker: tightMac });
    try {
      const plan = await rig.control('GET', '/api/launch/safe-pair');
      expect(plan.status).toBe(200);
      expect(plan.body.fit.summary).toMatch(/^needs 5\.9 GiB; 3\.0 GiB free/);
      expect(plan.body.canRun).toBe(false);
      expect(plan.body.blockers).toEqual(plan.body.fit.problems);

      const refused = await rig.control('POST', '/api/launch/safe-pair');
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain('Not enough memory: needs 5.9 GiB');

      const anyway = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeMemory: true });
      expect(anyway.status).toBe(200);
      expect(anyway.body.instances).toHaveLength(2);
      const bad = await rig.control('POST', '/api/launch/safe-pair', { acknowledgeMemory: 'yes' });
      expect(bad.status).toBe(400);
    } finally {
      await rig.close();
    }
  });
});
