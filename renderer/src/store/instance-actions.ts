/**
 * The store's actions on local models other than stopping (stop-actions.ts): the safe
 * pair's plan and launch, load, retry, unload, pin, cancel a request, and the one-button
 * fix of the shared-GPU warnings.
 */
import { localInstances } from '../../../shared/instance-state';
import type { Warning } from '../../../shared/snapshot';
import { errorMessage } from '../lib/error-message';
import type { ActionSlice } from './action-context';

/** The warning codes whose fix the page can apply with one button: the shared-GPU ones, fixed by relaunching with fast synch off. */
const FIXABLE_WARNINGS: ReadonlySet<Warning['code']> = new Set(['two_ring_fast_synch', 'ring_fast_synch_beside_jaccl', 'two_jaccl_shared_gpu']);

export function canFixWarning(warning: Warning): boolean {
  return FIXABLE_WARNINGS.has(warning.code);
}

export const instanceActions: ActionSlice<
  'loadPlan' | 'launchSafePair' | 'retryInstance' | 'loadModel' | 'unloadInstance' | 'setPinned' | 'cancelRequest' | 'fixWarning'
> = ({ bridge, set, get, run }) => ({
  async loadPlan() {
    set((s) => ({ plan: { ...s.plan, status: 'loading', error: null } }));
    try {
      const plan = await bridge.getSafePairPlan();
      set({ plan: { status: 'ready', plan, error: null } });
    } catch (error) {
      set((s) => ({ plan: { status: 'error', plan: s.plan.plan, error: errorMessage(error) } }));
    }
  },
  launchSafePair: (options) =>
    run('launch', async () => {
      await bridge.launchSafePair(options);
      void get().actions.loadPlan();
    }),
  retryInstance: (id) => run(`retry:${id}`, () => bridge.retryInstance(id)),
  loadModel: (model) =>
    run(`load:${model}`, async () => {
      await bridge.createInstance({ model, instanceType: 'ring' });
    }),
  unloadInstance: (id) => run(`unload:${id}`, () => bridge.unloadInstance(id)),
  setPinned: (id, pinned) => run(`pin:${id}`, () => bridge.setResidency(id, { pin: pinned })),
  cancelRequest: (requestId) => run(`cancel:${requestId}`, () => bridge.cancelRequest(requestId)),
  fixWarning: (warning) =>
    run(`fix:${warning.code}`, async () => {
      if (!canFixWarning(warning)) throw new Error(`No automatic fix for ${warning.code}: ${warning.fix}`);
      const affected = localInstances(get().snapshot).filter((i) => warning.instanceIds.includes(i.id) && i.fastSynch.enabled);
      // Drain, not cancel: requests already running finish before the runner relaunches
      // with MLX_METAL_FAST_SYNCH=0 (MLX reads it once per process, so a relaunch is needed).
      // Turning fast synch off needs no risk acknowledgement: it only lowers the risk.
      const results = await Promise.allSettled(affected.map((i) => bridge.updateInstance(i.id, { fastSynch: 'off', mode: 'drain' })));
      const failed = results.flatMap((r, n) => (r.status === 'rejected' ? [`${affected[n]?.modelName}: ${errorMessage(r.reason)}`] : []));
      if (failed.length > 0) throw new Error(`Could not relaunch ${failed.join('; ')}`);
      return affected.length === 0
        ? 'Nothing to relaunch: fast synch is already off'
        : `Relaunching ${affected.map((i) => i.modelName).join(' and ')} with fast synch off`;
    }),
});
