/**
 * The app's safe launch (popover and menu) while exo is attached: it plans on the
 * cluster and launches there, as `POST /api/launch/safe-pair` does, the fast-synch gate
 * included; against the serving fake exo over HTTP, with the real core.
 */
import { describe, expect, it } from 'vitest';
import { defaultSettings } from '../../shared/api';
import { startCoreRig } from '../../test/support/api-harness';
import { FakeExoCluster, LLAMA_1B, LLAMA_3B, startServingExo } from '../../test/support/fake-exo';
import { createCoreServices } from './core-services';

describe('the app’s safe launch with exo attached', () => {
  it('plans on the cluster, refuses two new ring models on one Mac with fast synch assumed on, and reuses placed ones', async () => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', ramGb: 96 });
    const exo = await startServingExo({ cluster, loadStepMs: 10 });
    const settings = { ...defaultSettings(), safePair: { small: LLAMA_1B, medium: LLAMA_3B } };
    const rig = await startCoreRig({ exoUrl: exo.url, settings });
    try {
      const services = createCoreServices({
        node: rig.node,
        dataDir: rig.core.dataDir,
        version: '0.0.0',
        settings: () => settings,
        mlx: rig.core.mlx,
        showLaunch: rig.core.showLaunch,
        exoCluster: rig.core.exo,
      });

      const plan = await services.planSafePair();
      expect(plan.models.map((m) => m.model)).toEqual([LLAMA_1B, LLAMA_3B]);
      expect('exo' in plan).toBe(true);
      await expect(services.launchSafePair()).rejects.toMatchObject({ code: 'fast_synch_shared_gpu' });
      expect(exo.cluster.instances.size).toBe(0);

      // Both placed already (by hand, in exo): nothing new would share the GPU, so the launch reuses them without the gate.
      exo.cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
      exo.cluster.addInstance({ model: LLAMA_3B, nodes: ['studio-a'], ready: true });
      await services.launchSafePair();
      expect(rig.node.snapshot().launch).toMatchObject({ state: 'done', step: `Already running on exo: ${LLAMA_1B} and ${LLAMA_3B}` });
    } finally {
      await rig.close();
      await exo.close();
    }
  });
});
