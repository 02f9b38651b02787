/**
 * The one interface the renderer uses to talk to the node. Two implementations:
 * Electron IPC (the preload exposes it as `window.exobar`) and HTTP + server-sent
 * events (renderer/bridge/http-bridge.ts, for `exobar serve` in a browser). The
 * actions are declared once, in shared/bridge-actions.ts.
 */
import type { BridgeActions } from './bridge-actions';
import type { LogStreamEvent } from './logs';
import type { Snapshot } from './snapshot';

export type { DiagnosticsResult } from './bridge-actions';

export type Unsubscribe = () => void;

/**
 * An alert the app could not show as a notification (macOS refuses notifications to
 * unsigned apps and to apps the user has not allowed): the popover shows it as a banner.
 */
export interface AppAlert {
  /** Unique within the app's run; the page dismisses by id. */
  id: number;
  title: string;
  body: string;
  /** Epoch milliseconds. */
  at: number;
}

/**
 * The kind of connection trouble: nothing answers, or the server runs and refused (or
 * was never given) the page's token. Only the HTTP bridge has a token to refuse.
 */
export type ConnectionProblem = 'unreachable' | 'token_refused' | 'no_token';

export interface ExobarBridge extends BridgeActions {
  /** Calls `listener` with every new snapshot, starting with the latest one. */
  subscribeSnapshots(listener: (snapshot: Snapshot) => void): Unsubscribe;
  /** Connection trouble (lost server, bad token) in words and its kind (unreachable when not said), or null when fine. */
  subscribeConnection(listener: (error: string | null, problem?: ConnectionProblem) => void): Unsubscribe;
  /**
   * The app's undelivered alerts (all of them on each change); only the Mac app has
   * them (a browser has no notifications from exobar to lose).
   */
  subscribeAlerts?(listener: (alerts: AppAlert[]) => void): Unsubscribe;
  /**
   * Follows one log (`GET /api/logs/{source}?follow=1&lines=N`, or the app's IPC): its
   * source, its last `lines` lines, then every new line as written; `ended` when the
   * stream stops (the source is gone, the server went away). Unsubscribe stops it.
   */
  followLog(source: string, lines: number, listener: (event: LogStreamEvent) => void): Unsubscribe;
  /** The tray asked to show a log (a model's line, "Open log"); only the Mac app has a tray. */
  subscribeOpenLog?(listener: (source: string) => void): Unsubscribe;
}
