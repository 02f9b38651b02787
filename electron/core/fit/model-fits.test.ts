/**
 * Each model's fit at `GET /api/models/fit`: the real core with sim runners and the
 * real check; only the machine's readings are replaced, by a Mac whose free memory the
 * test sets (and a 16 GB GPU wired limit). The sim 1B needs 1.7 GiB at 8192 tokens
 * (1.4 GiB of weights, 0.25 GB of KV cache), the 3B 4.3 GiB; 2 GB is kept as headroom.
 */
import { describe, expect, it } from 'vitest';
import { startCoreRig } from '../../../test/support/api-harness';
import { fitForLaunch } from './fit-for-launch';
import type { FitChecker } from './fit-gate';

const GiB = 1024 ** 3;

function macWithFree(): { checker: FitChecker; setFree(gb: number): void } {
  let free = 0;
  return {
    setFree: (gb) => {
      free = gb * GiB;
    },
    checker: (input) =>
      fitForLaunch({
        ...input,
        readMemory: async () => ({ totalBytes: 24 * GiB, freeBytes: free, source: 'vm_stat' }),
        readGpuLimit: async () => 16 * GiB,
      }),
  };
}

const verdicts = (body: { models: Array<{ model: string; verdict: string | null; words: string; running: boolean }> }) =>
  body.models.map((m) => [m.model, m.running ? 'running' : m.verdict, m.words]);

describe('GET /api/models/fit', () => {
  it('says fits, tight or does not fit for each model, with the figures, and "running" once one runs', async () => {
    const mac = macWithFree();
    const rig = await startCoreRig({ fitChecker: mac.checker });
    try {
      mac.setFree(6.5); // 4.5 GiB of room: the 1B leaves 2.8 GiB (fits), the 3B 0.2 GiB (tight)
      const roomy = await rig.control('GET', '/api/models/fit');
      expect(roomy.status).toBe(200);
      expect(verdicts(roomy.body)).toEqual([
        ['sim/llama-3.2-1b', 'fits', "fits: needs 1.7 GiB; 6.5 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 4.5 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left"],
        ['sim/llama-3.2-3b', 'tight', "tight: needs 4.3 GiB; 6.5 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 4.5 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left; leaves 0.2 GiB"],
      ]);
      expect(roomy.body.models[1].fit.models[0]).toMatchObject({ contextTokens: 8192, weightsSource: 'catalog' });

      mac.setFree(3.9); // 1.9 GiB of room
      const tight = await rig.control('GET', '/api/models/fit');
      expect(verdicts(tight.body).map(([, v]) => v)).toEqual(['tight', 'does_not_fit']);
      expect(tight.body.models[1].words).toBe("does not fit: needs 4.3 GiB; 3.9 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.9 GiB usable; 16.0 GiB of the GPU's 16.0 GiB limit left");
      expect(tight.body.models[1].fit.problems).toEqual(['Not enough memory: needs 4.3 GiB; 3.9 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 1.9 GiB usable.']);

      // The 1B running: it is named so, and its estimate now counts against the GPU limit of the 3B's check.
      mac.setFree(8);
      await rig.launch('sim/llama-3.2-1b');
      const after = await rig.control('GET', '/api/models/fit');
      expect(verdicts(after.body)).toEqual([
        ['sim/llama-3.2-1b', 'running', 'running'],
        ['sim/llama-3.2-3b', 'fits', "fits: needs 4.3 GiB; 8.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 6.0 GiB usable; 14.3 GiB of the GPU's 16.0 GiB limit left"],
      ]);

      const anonymous = await fetch(`${rig.url}/api/models/fit`);
      expect(anonymous.status).toBe(401);
    } finally {
      await rig.close();
    }
  });
});
