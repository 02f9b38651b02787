/**
 * The store's shapes: the state the page reads, the actions it calls and the options a
 * store is made with. Apart from the slices that fill them, so each slice and each view
 * imports the one vocabulary without importing the store's assembly.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { ExoProbeAnswer, SafePairPlan } from '../../../shared/api';
import type { AppAlert, ConnectionProblem, ExobarBridge } from '../../../shared/bridge';
import type { CatalogModel } from '../../../shared/catalog';
import type { LaunchSafePairOptions } from '../../../shared/bridge-actions';
import type { ModelFit } from '../../../shared/model-fit';
import type { ExoProcessControl } from '../../../shared/exo-process-control';
import type { Snapshot, TtftSample, Warning } from '../../../shared/snapshot';

export type ConnectionState = 'connecting' | 'connected' | 'error';

export interface Notice {
  kind: 'error' | 'info';
  message: string;
  /** Increases with every notice, so the same words shown twice still re-announce. */
  id: number;
}

export interface PlanState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  plan: SafePairPlan | null;
  error: string | null;
}

export interface ModelsState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  /** The node's catalog: sim models, and local MLX models where the runtime is found. */
  models: CatalogModel[];
  error: string | null;
  /** Each model's fit on this Mac when the list was last loaded, by model id; a model missing here was not checked. */
  fits: Record<string, ModelFit>;
}

/**
 * A stop waiting for the operator's answer: it would end `requests` requests in flight
 * (each fails for its client), so the page asks before sending it confirmed.
 */
export interface StopConfirmation {
  target: { kind: 'instance'; id: string; name: string } | { kind: 'all' };
  requests: number;
}

export interface ExobarActions {
  /** Fetches the safe pair's plan preview. */
  loadPlan(): Promise<void>;
  /** `acknowledgeMemory`: the operator's "launch anyway" past a failed fit check. */
  launchSafePair(options?: LaunchSafePairOptions): Promise<void>;
  /** Stops one model; with requests in flight it asks first (`stopConfirmation`) instead. */
  stopInstance(instanceId: string): Promise<void>;
  /** Starts a new runner for an instance that failed or needs attention. */
  retryInstance(instanceId: string): Promise<void>;
  /** Loads a catalog model now (a ring instance, through a launch's gates; busy key `load:<model>`); a refusal becomes the notice. */
  loadModel(model: string): Promise<void>;
  /** Unloads an idle model now. */
  unloadInstance(instanceId: string): Promise<void>;
  /** Pins or unpins a model (a pinned one never unloads by itself). */
  setPinned(instanceId: string, pinned: boolean): Promise<void>;
  /** Stops every local model; with requests in flight it asks first (`stopConfirmation`) instead. */
  stopAll(): Promise<void>;
  /** The operator's yes to `stopConfirmation`: the stop is sent confirmed. */
  confirmStop(): Promise<void>;
  /** The operator's no: nothing stops. */
  dismissStopConfirmation(): void;
  cancelRequest(requestId: string): Promise<void>;
  /** Applies a warning's fix; for the ring fast-synch warnings, relaunches the affected runners with fast synch off. */
  fixWarning(warning: Warning): Promise<void>;
  exportDiagnostics(): Promise<void>;
  copyApiBaseUrl(): Promise<void>;
  /** Fetches the model catalog. */
  loadModels(): Promise<void>;
  /** Starts "Set up MLX runtime"; its progress arrives in the snapshot's `mlx.setup`. */
  setupMlxRuntime(): Promise<void>;
  /** Looks for the MLX runtime and local models again, then reloads the catalog. */
  refreshMlxRuntime(): Promise<void>;
  /** Starts, stops or restarts this Mac's exo (busy key `exo-process`); the outcome is in the snapshot's `exoProcess`. */
  controlExoProcess(request: ExoProcessControl): Promise<void>;
  dismissNotice(): void;
  /** Hides one of the app's undelivered alerts (it does not come back). */
  dismissAlert(id: number): void;
  /** Tests an exo address without attaching; resolves with what was found (never rejects). */
  probeExo(url: string): Promise<ExoProbeAnswer>;
  /** Tests the address, then attaches to that exo (saved as exo.url); a refusal becomes the notice. */
  attachExo(url: string): Promise<void>;
  detachExo(): Promise<void>;
  /** Places a model exo took away, or whose exo load stalled, again (busy key `lost:<model>`); exo's reason, when it cannot, becomes the notice. */
  placeLostModelAgain(model: string): Promise<void>;
  /** Forgets a model exo took away (its exo_model_lost warning goes). */
  dismissLostModel(model: string): Promise<void>;
  /** The request log (the Requests view reads it when open); rejects with the bridge's error. */
  listRequests: ExobarBridge['listRequests'];
  /** The history per model over a range (the history charts). */
  getHistory: ExobarBridge['getHistory'];
  /** "Check GPU sharing": start, follow, cancel, and the kept reports (the panel handles the errors). */
  startSharingCheck: ExobarBridge['startSharingCheck'];
  getCheck: ExobarBridge['getCheck'];
  cancelCheck: ExobarBridge['cancelCheck'];
  listChecks: ExobarBridge['listChecks'];
  /** The logs the log view offers. */
  listLogSources: ExobarBridge['listLogSources'];
  /** Follows one log (the log view, while open). */
  followLog: ExobarBridge['followLog'];
  /** Opens the log view at this source (a card's Log button, the tray's Open log). */
  openLog(source: string): void;
}

/** What the log view is asked to show: `request` grows with each ask, so asking twice for one source still opens it. */
export interface LogViewRequest {
  source: string | null;
  request: number;
}

export interface ExobarState {
  snapshot: Snapshot;
  /** False until the first snapshot arrives: the page shows "connecting" meanwhile. */
  received: boolean;
  connection: ConnectionState;
  connectionError: string | null;
  /** The kind of `connectionError`: unreachable, or the token refused or missing. */
  connectionProblem: ConnectionProblem | null;
  /** Per instance id, the chart's bounded window of TTFT samples. */
  ttftHistory: Record<string, TtftSample[]>;
  plan: PlanState;
  models: ModelsState;
  /** Actions in flight by key ("launch", "stop:<id>", "cancel:<requestId>", ...): their buttons are disabled. */
  busy: Record<string, true>;
  notice: Notice | null;
  /** A stop that would end requests in flight, waiting for the operator's answer. */
  stopConfirmation: StopConfirmation | null;
  /** Alerts the Mac app could not show as notifications, not yet dismissed here. */
  alerts: AppAlert[];
  logView: LogViewRequest;
  /** How many snapshots were applied to the page (each apply is at most one render). */
  applied: number;
  /** Date.now() when the current snapshot was applied: live ages count on from here. */
  receivedAt: number;
  actions: ExobarActions;
}

export interface ExobarStoreOptions {
  /** The clock for `receivedAt` (tests pass a fake). */
  now?: () => number;
  /** Clipboard writer (tests pass a fake). */
  copy?: (text: string) => Promise<void>;
  ttftWindow?: number;
}

export type ExobarStore = StoreApi<ExobarState> & {
  /** Unsubscribes from the bridge. */
  dispose(): void;
};
