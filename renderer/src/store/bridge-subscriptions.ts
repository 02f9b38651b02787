/**
 * Keeps the store in step with the bridge: each pushed snapshot applied (with the TTFT
 * chart's window merged), the connection's state, the app's undelivered alerts and the
 * tray's "Open log". Subscribed as the store is made, so no push is missed before the
 * first render.
 */
import type { ExobarBridge } from '../../../shared/bridge';
import type { Snapshot, TtftSample } from '../../../shared/snapshot';
import type { StoreApi } from 'zustand/vanilla';
import { mergeTtftSamples } from './ttft-history';
import type { ExobarState } from './store-types';

export interface SubscriptionOptions {
  now: () => number;
  ttftWindow: number;
  dismissedAlerts: ReadonlySet<number>;
}

/** Subscribes the store to the bridge; returns the unsubscribe. */
export function subscribeToBridge(store: StoreApi<ExobarState>, bridge: ExobarBridge, options: SubscriptionOptions): () => void {
  const applySnapshot = (snapshot: Snapshot): void => {
    store.setState((s) => {
      const ttftHistory: Record<string, TtftSample[]> = {};
      for (const instance of snapshot.instances) {
        ttftHistory[instance.id] = mergeTtftSamples(s.ttftHistory[instance.id] ?? [], instance.ttft.samples, options.ttftWindow);
      }
      return {
        snapshot,
        received: true,
        connection: 'connected',
        connectionError: null,
        connectionProblem: null,
        ttftHistory,
        applied: s.applied + 1,
        receivedAt: options.now(),
      };
    });
  };

  // Applied as they arrive: the node already sends at most one per 100 ms (its broadcaster
  // is the one throttle between state and view), so a second one here would only add lag.
  const unsubscribeSnapshots = bridge.subscribeSnapshots(applySnapshot);
  const unsubscribeConnection = bridge.subscribeConnection((error, problem) => {
    if (error) {
      store.setState({ connection: 'error', connectionError: error, connectionProblem: problem ?? 'unreachable' });
    } else {
      store.setState((s) => ({ connection: s.received ? 'connected' : 'connecting', connectionError: null, connectionProblem: null }));
    }
  });
  const unsubscribeAlerts =
    bridge.subscribeAlerts?.((alerts) => store.setState({ alerts: alerts.filter((a) => !options.dismissedAlerts.has(a.id)) })) ?? (() => undefined);
  // The tray's "Open log" on a model's line (the Mac app).
  const unsubscribeOpenLog = bridge.subscribeOpenLog?.((source) => store.getState().actions.openLog(source)) ?? (() => undefined);

  return () => {
    unsubscribeSnapshots();
    unsubscribeConnection();
    unsubscribeAlerts();
    unsubscribeOpenLog();
  };
}
