/**
 * The safe launch's memory figure on an exo cluster: per Mac, from exo's state, and
 * never 0 because both models are placed already (nothing more to load).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../../shared/api';
import { TINY, TINY_B, twoNodeCluster, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { planExoSafePair } from './exo-safe-pair';

let exo: ServingExo | null = null;
afterEach(async () => {
  await exo?.close();
  exo = null;
});

describe('the safe-launch plan on exo, both models placed', () => {
  it('says each Mac’s free memory from exo’s state, not 0 because nothing needs loading', async () => {
    exo = await startServingExo({ cluster: twoNodeCluster() });
    const [a, b] = exo.cluster.nodes;
    a!.ramAvailable = 22.5 * 1024 ** 3;
    b!.ramAvailable = 20 * 1024 ** 3;
    const plan = await planExoSafePair({ url: exo.url, settings: { ...defaultSettings(), safePair: { small: TINY, medium: TINY_B } } });
    expect(plan.models.map((m) => [m.model, m.alreadyRunning])).toEqual([
      [TINY, true],
      [TINY_B, true],
    ]);
    expect(plan.memory.requiredBytes).toBe(0);
    expect(plan.memory.byMac).toEqual([
      { nodeId: a!.id, label: 'studio-a', freeBytes: 22.5 * 1024 ** 3 },
      { nodeId: b!.id, label: 'studio-b', freeBytes: 20 * 1024 ** 3 },
    ]);
    expect(plan.memory.freeBytes).toBe(42.5 * 1024 ** 3);
  });
});
