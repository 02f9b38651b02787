/**
 * The safe pair (Llama 3.2 1B and 3B) planned by exobar's real planner on a serving fake
 * exo with one Mac of `ramGb`, fast synch assumed on there (exo's default, unpublished):
 * the plan the server sends, for the tests of "launch anyway" in the menu and the popover.
 */
import type { SafePairPlan } from '../../../shared/api';
import { FakeExoCluster } from './fake-cluster';
import { LLAMA_1B, LLAMA_3B } from './scenarios';
import { startServingExo } from './worker/serving-exo';

/** Plans, then closes the fake exo. */
export async function oneMacPairPlan(ramGb: number): Promise<SafePairPlan> {
  // Loaded here: the fake's entry module exports this plan, and what only runs the fake (the `exo` command) must not load exobar's planner.
  const [{ defaultSettings }, { planExoSafePair }] = await Promise.all([
    import('../../../shared/api'),
    import('../../../electron/core/exo/launch/exo-safe-pair'),
  ]);
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a', ramGb });
  const exo = await startServingExo({ cluster });
  try {
    return await planExoSafePair({
      url: exo.url,
      settings: { ...defaultSettings(), safePair: { small: LLAMA_1B, medium: LLAMA_3B } },
      fastSynchOf: () => ({ enabled: true, assumed: true }),
    });
  } finally {
    await exo.close();
  }
}
