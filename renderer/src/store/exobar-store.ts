/**
 * The page's one store: a mirror of the latest snapshot the bridge pushed, the
 * connection state, and named actions that call the bridge. Views never own node
 * state; they read slices of this store with selectors.
 *
 * Assembled here from its parts: the shapes (store-types.ts), the initial state, the
 * action slices by concern (stop, instance, model, exo and page actions, each made from
 * one shared context with its busy runner, action-context.ts) and the bridge
 * subscriptions (bridge-subscriptions.ts).
 */
import { createStore } from 'zustand/vanilla';
import type { ExobarBridge } from '../../../shared/bridge';
import { emptySnapshot } from '../../../shared/snapshot';
import { TTFT_WINDOW } from '../../../shared/stats';
import { copyText } from '../lib/clipboard';
import { createActionContext } from './action-context';
import { subscribeToBridge } from './bridge-subscriptions';
import { exoActions } from './exo-actions';
import { instanceActions } from './instance-actions';
import { modelActions } from './model-actions';
import { pageActions } from './page-actions';
import { stopActions } from './stop-actions';
import type { ExobarActions, ExobarState, ExobarStore, ExobarStoreOptions } from './store-types';

export type * from './store-types';
export { canFixWarning } from './instance-actions';

/** The state before the first snapshot: the page shows "connecting". */
function initialState(actions: ExobarActions): ExobarState {
  return {
    snapshot: emptySnapshot(),
    received: false,
    connection: 'connecting',
    connectionError: null,
    connectionProblem: null,
    ttftHistory: {},
    plan: { status: 'idle', plan: null, error: null },
    models: { status: 'idle', models: [], error: null, fits: {} },
    busy: {},
    notice: null,
    stopConfirmation: null,
    alerts: [],
    logView: { source: null, request: 0 },
    applied: 0,
    receivedAt: 0,
    actions,
  };
}

/**
 * Creates the store and subscribes it to the bridge at once, so no pushed snapshot is
 * missed between creation and the first render.
 */
export function createExobarStore(bridge: ExobarBridge, options: ExobarStoreOptions = {}): ExobarStore {
  const dismissedAlerts = new Set<number>();
  const store = createStore<ExobarState>()((set, get) => {
    const ctx = createActionContext(bridge, set, get, dismissedAlerts);
    return initialState({
      ...instanceActions(ctx),
      ...stopActions(ctx),
      ...modelActions(ctx),
      ...exoActions(ctx),
      ...pageActions(options.copy ?? copyText)(ctx),
    });
  });
  const unsubscribe = subscribeToBridge(store, bridge, {
    now: options.now ?? Date.now,
    ttftWindow: options.ttftWindow ?? TTFT_WINDOW,
    dismissedAlerts,
  });
  return Object.assign(store, { dispose: unsubscribe });
}
