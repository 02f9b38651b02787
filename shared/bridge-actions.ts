/**
 * Every action the page can ask of the node, declared once: its signature (the
 * `BridgeActions` interface) and how it travels (the `BRIDGE_ACTIONS` table: its IPC
 * channel, its HTTP method, path and body). The preload, main's IPC handlers and both
 * renderer bridges are built from these: over HTTP the request goes to `exobar serve`,
 * over IPC main dispatches the same request to the same route table in process, so the
 * route is the action's only implementation.
 *
 * A new action: one method here, one row in the table, its answer's decoder in
 * shared/bridge-answers.ts (the compiler asks for it), and its route. Kept free of
 * runtime imports (zod included) because the sandboxed preload bundles it.
 */
import type { CreateInstanceRequest, ExoProbeAnswer, ResidencyRequest, SafePairPlan, UpdateInstanceRequest } from './api';
import type { CatalogModel } from './catalog';
import type { ModelFit } from './model-fit';
import type { PlaceAgainOptions, PlaceAgainResult } from './exo-cluster-events';
import type { ExoProcessControl } from './exo-process-control';
import type { HistoryAnswer, HistoryRange } from './history';
import type { LogSourceList } from './logs';
import type { RequestList, RequestOutcome, RequestSource } from './request-record';
import type { CheckList, CheckStatus, SharingCheckRequest } from './sharing-check';

/** The Requests view's filters (`GET /api/requests`'s query). */
export interface RequestFilter {
  model?: string;
  source?: RequestSource;
  outcome?: RequestOutcome;
  limit?: number;
}

export interface DiagnosticsResult {
  /** False when the user dismissed the save dialog. */
  saved: boolean;
  /** Where the bundle went (a path in the app, a file name in the browser). */
  location: string | null;
}

/**
 * How a stop is asked for. Stopping a model ends its requests in flight: the server
 * refuses (409 `requests_in_flight`) unless `confirm` is true, so the page asks first.
 */
export interface StopOptions {
  confirm: boolean;
}

/**
 * How a safe pair launch is asked for: `acknowledgeMemory` launches past a failed fit
 * check (this Mac's, or on exo each Mac's); `acknowledgeRisk` past exo's fast-synch gate
 * (two ring models on one Mac's GPU with fast synch on or assumed on).
 */
export interface LaunchSafePairOptions {
  acknowledgeMemory?: boolean;
  acknowledgeRisk?: boolean;
}

/** The actions' signatures, as the page calls them. */
export interface BridgeActions {
  getSafePairPlan(): Promise<SafePairPlan>;
  /** With `{ acknowledgeMemory: true }`, launches even though the fit check says it does not fit; `acknowledgeRisk` passes exo's fast-synch gate. */
  launchSafePair(options?: LaunchSafePairOptions): Promise<void>;
  createInstance(request: CreateInstanceRequest): Promise<{ id: string }>;
  updateInstance(id: string, request: UpdateInstanceRequest): Promise<void>;
  /** Without `{ confirm: true }`, refused while the model has requests in flight. */
  stopInstance(id: string, options?: StopOptions): Promise<void>;
  /** The operator's retry of a runner that failed or needs attention (runner.state). */
  retryInstance(id: string): Promise<void>;
  /** Unloads an idle instance now (refused while it has requests queued or in flight). */
  unloadInstance(id: string): Promise<void>;
  /** Pins or unpins an instance, or sets its idle time to live (-1: never). */
  setResidency(id: string, request: ResidencyRequest): Promise<void>;
  /** Without `{ confirm: true }`, refused while any model has requests in flight. */
  stopAll(options?: StopOptions): Promise<void>;
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
  /** Each catalog model's fit on this Mac now (fits, tight, does not fit, with the figures). */
  checkModelFits(): Promise<ModelFit[]>;
  /** Tests an exo address (does exo answer `GET /node_id` there?) without attaching. */
  probeExo(url: string): Promise<ExoProbeAnswer>;
  /** Tests the address, then attaches to that exo and saves `exo.url`; rejects with why when nothing exo-like answers. */
  attachExo(url: string): Promise<void>;
  /** Stops reading exo and clears `exo.url`. */
  detachExo(): Promise<void>;
  /**
   * Starts, stops or restarts this Mac's exo (docs/exo-process.md); resolves once the
   * action is under way (its progress is in the snapshot's `exoProcess`). Rejects with
   * `exo_restart_required` when a restart comes without `consent: true`.
   */
  controlExoProcess(request: ExoProcessControl): Promise<void>;
  /**
   * Places a model exo took away (an `exo_model_lost` warning) again, as it was, or one
   * whose load stalled (`exo_load_stalled`: its stalled instance stopped first); rejects
   * with exo's reason when exo cannot place it, with `fast_synch_shared_gpu` unless
   * `{ acknowledgeRisk: true }` when it would share a Mac's GPU with another ring model.
   */
  placeLostModelAgain(model: string, options?: PlaceAgainOptions): Promise<PlaceAgainResult>;
  /** Forgets a model exo took away: its `exo_model_lost` warning goes. */
  dismissLostModel(model: string): Promise<void>;
  /** The request log, newest first (docs/request-log.md). */
  listRequests(filter?: RequestFilter): Promise<RequestList>;
  /** Every model's history over the range, and its slower_than_usual warning. */
  getHistory(range: HistoryRange): Promise<HistoryAnswer>;
  /** Starts "Check GPU sharing" (one at a time: rejects with `check_running` while one runs); its progress is `getCheck`'s. */
  startSharingCheck(request: SharingCheckRequest): Promise<CheckStatus>;
  /** A check's progress while it runs, then its result and markdown report. */
  getCheck(id: string): Promise<CheckStatus>;
  /** Cancels a running check; resolves once the instances are back as they were. */
  cancelCheck(id: string): Promise<void>;
  /** The kept check reports, newest first, and the check running now. */
  listChecks(): Promise<CheckList>;
  /** The logs the page can follow (`GET /api/logs`): each model's runner, exobar's own, exo's. */
  listLogSources(): Promise<LogSourceList>;
}

export type BridgeActionName = keyof BridgeActions;
export type BridgeActionArgs<K extends BridgeActionName> = Parameters<BridgeActions[K]>;
export type BridgeActionResult<K extends BridgeActionName> = Awaited<ReturnType<BridgeActions[K]>>;

/** How one action travels: its IPC channel, and the HTTP request `exobar serve` answers it with. */
export interface BridgeActionRoute<Args extends unknown[]> {
  channel: `exobar:${string}`;
  http: {
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
    path: (...args: Args) => string;
    /** The JSON body, for actions that send one. */
    body?: (...args: Args) => unknown;
  };
}

const segment = encodeURIComponent;
/** A stop's body: `{"confirm": true}` when confirmed, none otherwise. */
const confirmBody = (options: StopOptions | undefined): { confirm: true } | undefined => (options?.confirm ? { confirm: true } : undefined);

/** A safe launch's body: only the acknowledgements given, none at all for a plain launch. */
function launchBody(options: LaunchSafePairOptions | undefined): LaunchSafePairOptions | undefined {
  const body: LaunchSafePairOptions = {
    ...(options?.acknowledgeMemory ? { acknowledgeMemory: true } : {}),
    ...(options?.acknowledgeRisk ? { acknowledgeRisk: true } : {}),
  };
  return Object.keys(body).length > 0 ? body : undefined;
}

const TABLE = {
  getSafePairPlan: { channel: 'exobar:get-safe-pair-plan', http: { method: 'GET', path: () => '/api/launch/safe-pair' } },
  launchSafePair: {
    channel: 'exobar:launch-safe-pair',
    http: { method: 'POST', path: () => '/api/launch/safe-pair', body: (options) => launchBody(options) },
  },
  createInstance: { channel: 'exobar:create-instance', http: { method: 'POST', path: () => '/api/instances', body: (request) => request } },
  updateInstance: {
    channel: 'exobar:update-instance',
    http: { method: 'PATCH', path: (id) => `/api/instances/${segment(id)}`, body: (_id, request) => request },
  },
  retryInstance: { channel: 'exobar:retry-instance', http: { method: 'POST', path: (id) => `/api/instances/${segment(id)}/retry` } },
  unloadInstance: { channel: 'exobar:unload-instance', http: { method: 'POST', path: (id) => `/api/instances/${segment(id)}/unload` } },
  setResidency: {
    channel: 'exobar:set-residency',
    http: { method: 'POST', path: (id) => `/api/instances/${segment(id)}/residency`, body: (_id, request) => request },
  },
  // The confirmation travels in the body (`{"confirm": true}`), so the paths stay as they are.
  stopInstance: {
    channel: 'exobar:stop-instance',
    http: { method: 'DELETE', path: (id) => `/api/instances/${segment(id)}`, body: (_id, options) => confirmBody(options) },
  },
  // One call: the server stops every instance it has, one launched since the page's last snapshot included.
  stopAll: { channel: 'exobar:stop-all', http: { method: 'DELETE', path: () => '/api/instances', body: (options) => confirmBody(options) } },
  cancelRequest: { channel: 'exobar:cancel-request', http: { method: 'POST', path: (requestId) => `/v1/cancel/${segment(requestId)}` } },
  exportDiagnostics: { channel: 'exobar:export-diagnostics', http: { method: 'POST', path: () => '/api/diagnostics' } },
  // 202: the setup runs on in the server; its progress comes in the snapshots' mlx.setup.
  setupMlxRuntime: { channel: 'exobar:setup-mlx-runtime', http: { method: 'POST', path: () => '/api/mlx/setup' } },
  refreshMlxRuntime: { channel: 'exobar:refresh-mlx-runtime', http: { method: 'POST', path: () => '/api/mlx/refresh' } },
  listModels: { channel: 'exobar:list-models', http: { method: 'GET', path: () => '/api/models' } },
  checkModelFits: { channel: 'exobar:check-model-fits', http: { method: 'GET', path: () => '/api/models/fit' } },
  probeExo: { channel: 'exobar:probe-exo', http: { method: 'GET', path: (url) => `/api/exo/probe?url=${segment(url)}` } },
  attachExo: { channel: 'exobar:attach-exo', http: { method: 'POST', path: () => '/api/exo/attach', body: (url) => ({ url }) } },
  detachExo: { channel: 'exobar:detach-exo', http: { method: 'POST', path: () => '/api/exo/detach' } },
  // 202: the start, stop or restart goes on in the server; its progress comes in the snapshots' exoProcess.
  controlExoProcess: {
    channel: 'exobar:control-exo-process',
    http: { method: 'POST', path: ({ action }) => `/api/exo/process/${action}`, body: ({ action, ...body }) => (action === 'stop' ? undefined : body) },
  },
  placeLostModelAgain: {
    channel: 'exobar:place-lost-model-again',
    http: {
      method: 'POST',
      path: () => '/api/exo/lost-models/place-again',
      body: (model, options) => (options?.acknowledgeRisk ? { model, acknowledgeRisk: true } : { model }),
    },
  },
  dismissLostModel: {
    channel: 'exobar:dismiss-lost-model',
    http: { method: 'POST', path: () => '/api/exo/lost-models/dismiss', body: (model) => ({ model }) },
  },
  listRequests: {
    channel: 'exobar:list-requests',
    http: {
      method: 'GET',
      path: (filter) => {
        const query = Object.entries(filter ?? {})
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${k}=${segment(String(v))}`)
          .join('&');
        return `/api/requests${query ? `?${query}` : ''}`;
      },
    },
  },
  getHistory: { channel: 'exobar:get-history', http: { method: 'GET', path: (range) => `/api/history?range=${segment(range)}` } },
  // 202: the check runs on in the server; its progress is GET /api/checks/{id}'s.
  startSharingCheck: { channel: 'exobar:start-sharing-check', http: { method: 'POST', path: () => '/api/checks/sharing', body: (request) => request } },
  getCheck: { channel: 'exobar:get-check', http: { method: 'GET', path: (id) => `/api/checks/${segment(id)}` } },
  cancelCheck: { channel: 'exobar:cancel-check', http: { method: 'DELETE', path: (id) => `/api/checks/${segment(id)}` } },
  listChecks: { channel: 'exobar:list-checks', http: { method: 'GET', path: () => '/api/checks' } },
  listLogSources: { channel: 'exobar:list-log-sources', http: { method: 'GET', path: () => '/api/logs' } },
} as const satisfies { [K in BridgeActionName]: BridgeActionRoute<BridgeActionArgs<K>> };

/**
 * The table, typed per action (so generic code over an action name keeps its argument
 * types). IPC channel names and HTTP paths are contracts: never rename one.
 */
export const BRIDGE_ACTIONS: { readonly [K in BridgeActionName]: BridgeActionRoute<BridgeActionArgs<K>> & { channel: (typeof TABLE)[K]['channel'] } } = TABLE;

/** The action names, in the table's order. */
export const BRIDGE_ACTION_NAMES = Object.keys(BRIDGE_ACTIONS) as BridgeActionName[];
