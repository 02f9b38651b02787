/**
 * The store's stop actions: one model or all of them. A stop that would end requests in
 * flight asks first (`stopConfirmation`) and is sent confirmed only on the operator's
 * yes; a 409 `requests_in_flight` (a request came after the last snapshot) asks too,
 * with the server's count, never an error notice.
 */
import { localInstances } from '../../../shared/instance-state';
import { requestsEndingOnStop } from '../../../shared/stop-confirmation';
import { requestsInFlightOf } from '../bridge/bridge-error';
import type { ActionContext, ActionSlice } from './action-context';
import type { StopConfirmation } from './store-types';

type Target = StopConfirmation['target'];

const busyKey = (target: Target): string => (target.kind === 'all' ? 'stop-all' : `stop:${target.id}`);

/** Sends a stop; unconfirmed, it first counts the requests it would end in the snapshot and asks when there are any. */
function sendStop({ bridge, get, set, run }: ActionContext, target: Target, confirm: boolean): Promise<void> {
  const targetIds = (): string[] => (target.kind === 'all' ? localInstances(get().snapshot).map((i) => i.id) : [target.id]);
  if (!confirm) {
    const requests = requestsEndingOnStop(get().snapshot, targetIds());
    if (requests > 0) {
      set({ stopConfirmation: { target, requests } });
      return Promise.resolve();
    }
  }
  return run(busyKey(target), async () => {
    try {
      if (target.kind === 'all') await bridge.stopAll(confirm ? { confirm: true } : undefined);
      else await bridge.stopInstance(target.id, confirm ? { confirm: true } : undefined);
    } catch (error) {
      const requests = confirm ? null : requestsInFlightOf(error, requestsEndingOnStop(get().snapshot, targetIds()));
      if (requests === null) throw error;
      set({ stopConfirmation: { target, requests } });
    }
  });
}

export const stopActions: ActionSlice<'stopInstance' | 'stopAll' | 'confirmStop' | 'dismissStopConfirmation'> = (ctx) => ({
  stopInstance: (id) => {
    const name = ctx.get().snapshot.instances.find((i) => i.id === id)?.modelName ?? id;
    return sendStop(ctx, { kind: 'instance', id, name }, false);
  },
  stopAll: () => sendStop(ctx, { kind: 'all' }, false),
  confirmStop: async () => {
    const pending = ctx.get().stopConfirmation;
    if (!pending) return;
    ctx.set({ stopConfirmation: null });
    await sendStop(ctx, pending.target, true);
  },
  dismissStopConfirmation: () => ctx.set({ stopConfirmation: null }),
});
