/**
 * The safe pair (Llama 3.2 1B and 3B) planned by exobar's real planner on a serving fake
 * exo with one Mac of `ramGb`, fast synch assumed on there (exo's default, unpublished):
 * the plan the server sends, for the tests of "launch anyway" in the menu and the popover.
 */
import { defaultSettings, type SafePairPlan } from '../../../shared/api';
import { planExoSafePair } from '../../../electron/core/exo/launch/exo-safe-pair';
import { FakeExoCluster } from './fake-cluster';
import { LLAMA_1B, LLAMA_3B } from './scenarios';
import { startServingExo } from './worker/serving-exo';

/** Plans, then closes the fake exo. */
export async function oneMacPairPlan(ramGb: number): Promise<SafePairPlan> {
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
