/**
 * The one interface the renderer uses to talk to the node. Two implementations:
 * Electron IPC (the preload exposes it as `window.exobar`) and HTTP + server-sent
 * events (renderer/bridge/http-bridge.ts, for `exobar serve` in a browser).
 */
import type { CreateInstanceRequest, SafePairPlan, UpdateInstanceRequest } from './api';
import type { CatalogModel } from './catalog';
import type { Snapshot } from './snapshot';

export type Unsubscribe = () => void;

export interface DiagnosticsResult {
  /** False when the user dismissed the save dialog. */
  saved: boolean;
  /** Where the bundle went (a path in the app, a file name in the browser). */
  location: string | null;
}

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

export interface ExobarBridge {
  /** Calls `listener` with every new snapshot, starting with the latest one. */
  subscribeSnapshots(listener: (snapshot: Snapshot) => void): Unsubscribe;
  /** Connection trouble (lost server, bad token) in words, or null when fine. */
  subscribeConnection(listener: (error: string | null) => void): Unsubscribe;
  /**
   * The app's undelivered alerts (all of them on each change); only the Mac app has
   * them (a browser has no notifications from exobar to lose).
   */
  subscribeAlerts?(listener: (alerts: AppAlert[]) => void): Unsubscribe;
  getSafePairPlan(): Promise<SafePairPlan>;
  launchSafePair(): Promise<void>;
  createInstance(request: CreateInstanceRequest): Promise<{ id: string }>;
  updateInstance(id: string, request: UpdateInstanceRequest): Promise<void>;
  stopInstance(id: string): Promise<void>;
  /** The operator's retry of a runner that failed or needs attention (runner.state). */
  retryInstance(id: string): Promise<void>;
  stopAll(): Promise<void>;
  cancelRequest(requestId: string): Promise<void>;
  exportDiagnostics(): Promise<DiagnosticsResult>;
  /**
   * Starts "Set up MLX runtime" (a virtual environment with mlx-lm in the data
   * directory) and resolves once it has started; its progress is in the snapshot's
   * `mlx.setup`. Rejects where MLX cannot run (not macOS on Apple silicon).
   */
  setupMlxRuntime(): Promise<void>;
  /** Looks for the MLX runtime and the local MLX models again; the result is in the snapshot's `mlx`. */
  refreshMlxRuntime(): Promise<void>;
  /** The node's model catalog: the sim models and, where the MLX runtime is found, the local MLX models. */
  listModels(): Promise<CatalogModel[]>;
}
