/**
 * The one interface the renderer uses to talk to the node. Two implementations:
 * Electron IPC (the preload exposes it as `window.exobar`) and HTTP + server-sent
 * events (renderer/bridge/http-bridge.ts, for `exobar serve` in a browser). The
 * actions are declared once, in shared/bridge-actions.ts.
 */
import type { BridgeActions } from './bridge-actions';
import type { Snapshot } from './snapshot';

export type { DiagnosticsResult } from './bridge-actions';

export type Unsubscribe = () => void;

export interface ExobarBridge extends BridgeActions {
  /** Calls `listener` with every new snapshot, starting with the latest one. */
  subscribeSnapshots(listener: (snapshot: Snapshot) => void): Unsubscribe;
  /** Connection trouble (lost server, bad token) in words, or null when fine. */
  subscribeConnection(listener: (error: string | null) => void): Unsubscribe;
}
