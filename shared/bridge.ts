/**
 * The one interface the renderer uses to talk to the node. Two implementations:
 * Electron IPC (the preload exposes it as `window.exobar`) and HTTP + server-sent
 * events (renderer/bridge/http-bridge.ts, for `exobar serve` in a browser).
 */
import type { CreateInstanceRequest, ExoProbeAnswer, SafePairPlan, UpdateInstanceRequest } from './api';
import type { CatalogModel } from './catalog';
import type { Snapshot } from './snapshot';

export type Unsubscribe = () => void;

export interface DiagnosticsResult {
  /** False when the user dismissed the save dialog. */
  saved: boolean;
  /** Where the bundle went (a path in the app, a file name in the browser). */
  location: string | null;
}

export interface ExobarBridge {
  /** Calls `listener` with every new snapshot, starting with the latest one. */
  subscribeSnapshots(listener: (snapshot: Snapshot) => void): Unsubscribe;
  /** Connection trouble (lost server, bad token) in words, or null when fine. */
  subscribeConnection(listener: (error: string | null) => void): Unsubscribe;
  getSafePairPlan(): Promise<SafePairPlan>;
  launchSafePair(): Promise<void>;
  createInstance(request: CreateInstanceRequest): Promise<{ id: string }>;
  updateInstance(id: string, request: UpdateInstanceRequest): Promise<void>;
  stopInstance(id: string): Promise<void>;
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
  /** Tests an exo address (does exo answer `GET /node_id` there?) without attaching. */
  probeExo(url: string): Promise<ExoProbeAnswer>;
  /** Tests the address, then attaches to that exo and saves `exo.url`; rejects with why when nothing exo-like answers. */
  attachExo(url: string): Promise<void>;
  /** Stops reading exo and clears `exo.url`. */
  detachExo(): Promise<void>;
}
