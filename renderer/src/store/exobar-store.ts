/**
 * The page's one store: a mirror of the latest snapshot the bridge pushed, the
 * connection state, and named actions that call the bridge. Views never own node
 * state; they read slices of this store with selectors.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ExoProbeAnswer, SafePairPlan } from '../../../shared/api';
import type { AppAlert, ConnectionProblem, ExobarBridge } from '../../../shared/bridge';
import type { CatalogModel } from '../../../shared/catalog';
import type { LaunchSafePairOptions } from '../../../shared/bridge-actions';
import type { ModelFit } from '../../../shared/model-fit';
import type { ExoProcessControl } from '../../../shared/exo-process-control';
import { localInstances } from '../../../shared/instance-state';
import { requestsEndingOnStop } from '../../../shared/stop-confirmation';
import { requestsInFlightOf } from '../bridge/bridge-error';
import { emptySnapshot, type Snapshot, type TtftSample, type Warning } from '../../../shared/snapshot';
import { copyText } from '../lib/clipboard';
import { errorMessage } from '../lib/error-message';
import { TTFT_WINDOW } from '../../../shared/stats';
import { mergeTtftSamples } from './ttft-history';

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

/** The warning codes whose fix the page can apply with one button: the shared-GPU ones, fixed by relaunching with fast synch off. */
const FIXABLE_WARNINGS: ReadonlySet<Warning['code']> = new Set(['two_ring_fast_synch', 'ring_fast_synch_beside_jaccl', 'two_jaccl_shared_gpu']);

export function canFixWarning(warning: Warning): boolean {
  return FIXABLE_WARNINGS.has(warning.code);
}

/**
 * Creates the store and subscribes it to the bridge at once, so no pushed snapshot is
 * missed between creation and the first render.
 */
export function createExobarStore(bridge: ExobarBridge, options: ExobarStoreOptions = {}): ExobarStore {
  const copy = options.copy ?? copyText;
  const ttftWindow = options.ttftWindow ?? TTFT_WINDOW;
  const now = options.now ?? Date.now;
  let noticeId = 0;
  const dismissedAlerts = new Set<number>();

  const store = createStore<ExobarState>()((set, get) => {
    const notify = (kind: Notice['kind'], message: string): void => set({ notice: { kind, message, id: ++noticeId } });

    /** Runs one bridge call with its button disabled; a failure becomes the notice. */
    const run = async (key: string, call: () => Promise<string | void>): Promise<void> => {
      if (get().busy[key]) return;
      set((s) => ({ busy: { ...s.busy, [key]: true } }));
      try {
        const info = await call();
        if (info) notify('info', info);
      } catch (error) {
        notify('error', errorMessage(error));
      } finally {
        set((s) => {
          const { [key]: _done, ...rest } = s.busy;
          return { busy: rest };
        });
      }
    };

    const busyKey = (target: StopConfirmation['target']): string => (target.kind === 'all' ? 'stop-all' : `stop:${target.id}`);
    const targetIds = (target: StopConfirmation['target']): string[] => (target.kind === 'all' ? localInstances(get().snapshot).map((i) => i.id) : [target.id]);

    /**
     * Sends a stop. Unconfirmed, it first counts the requests it would end in the
     * snapshot and asks when there are any; a 409 `requests_in_flight` (a request came
     * after the last snapshot) asks too, with the server's count: never an error notice.
     */
    const stop = (target: StopConfirmation['target'], confirm: boolean): Promise<void> => {
      if (!confirm) {
        const requests = requestsEndingOnStop(get().snapshot, targetIds(target));
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
          const requests = confirm ? null : requestsInFlightOf(error, requestsEndingOnStop(get().snapshot, targetIds(target)));
          if (requests === null) throw error;
          set({ stopConfirmation: { target, requests } });
        }
      });
    };

    const actions: ExobarActions = {
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
      stopInstance: (id) => {
        const name = get().snapshot.instances.find((i) => i.id === id)?.modelName ?? id;
        return stop({ kind: 'instance', id, name }, false);
      },
      retryInstance: (id) => run(`retry:${id}`, () => bridge.retryInstance(id)),
      loadModel: (model) =>
        run(`load:${model}`, async () => {
          await bridge.createInstance({ model, instanceType: 'ring' });
        }),
      unloadInstance: (id) => run(`unload:${id}`, () => bridge.unloadInstance(id)),
      setPinned: (id, pinned) => run(`pin:${id}`, () => bridge.setResidency(id, { pin: pinned })),
      stopAll: () => stop({ kind: 'all' }, false),
      confirmStop: async () => {
        const pending = get().stopConfirmation;
        if (!pending) return;
        set({ stopConfirmation: null });
        await stop(pending.target, true);
      },
      dismissStopConfirmation: () => set({ stopConfirmation: null }),
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
      exportDiagnostics: () =>
        run('diagnostics', async () => {
          const result = await bridge.exportDiagnostics();
          if (!result.saved) return;
          return `Diagnostic bundle saved${result.location ? `: ${result.location}` : ''}`;
        }),
      copyApiBaseUrl: () =>
        run('copy-url', async () => {
          const url = get().snapshot.apiBaseUrl;
          if (!url) throw new Error('The local API is not running, so there is no address to copy');
          await copy(url);
          return `Copied ${url}`;
        }),
      async loadModels() {
        set((s) => ({ models: { ...s.models, status: 'loading', error: null } }));
        try {
          const models = await bridge.listModels();
          // The fit words are an extra: a server without them (or a failed reading) still lists the models.
          const fits = await bridge.checkModelFits().then(
            (list) => Object.fromEntries(list.map((f) => [f.model, f])),
            () => ({}),
          );
          set({ models: { status: 'ready', models, error: null, fits } });
        } catch (error) {
          // Keep the last list: a failed reload should not empty the panel.
          set((s) => ({ models: { status: 'error', models: s.models.models, error: errorMessage(error), fits: s.models.fits } }));
        }
      },
      // The outcome (running, failed with pip's output, done) is shown from the snapshot,
      // so only a refusal to start becomes a notice.
      setupMlxRuntime: () => run('mlx-setup', () => bridge.setupMlxRuntime()),
      refreshMlxRuntime: () =>
        run('mlx-refresh', async () => {
          await bridge.refreshMlxRuntime();
          await get().actions.loadModels();
        }),
      // One key for the three: while one is under way the others wait (the snapshot shows its progress).
      controlExoProcess: (request) => run('exo-process', () => bridge.controlExoProcess(request)),
      dismissNotice: () => set({ notice: null }),
      dismissAlert: (id) => {
        dismissedAlerts.add(id);
        set((s) => ({ alerts: s.alerts.filter((a) => a.id !== id) }));
      },
      listRequests: (filter) => bridge.listRequests(filter),
      getHistory: (range) => bridge.getHistory(range),
      startSharingCheck: (request) => bridge.startSharingCheck(request),
      getCheck: (id) => bridge.getCheck(id),
      cancelCheck: (id) => bridge.cancelCheck(id),
      listChecks: () => bridge.listChecks(),
      listLogSources: () => bridge.listLogSources(),
      followLog: (source, lines, listener) => bridge.followLog(source, lines, listener),
      openLog: (source) => set((s) => ({ logView: { source, request: s.logView.request + 1 } })),
      async probeExo(url) {
        try {
          return await bridge.probeExo(url);
        } catch (error) {
          return { ok: false, url, error: errorMessage(error) };
        }
      },
      attachExo: (url) =>
        run('exo-attach', async () => {
          await bridge.attachExo(url);
          return `Attached to exo at ${url}`;
        }),
      detachExo: () => run('exo-detach', () => bridge.detachExo()),
      placeLostModelAgain: (model) =>
        run(`lost:${model}`, async () => {
          const placed = await bridge.placeLostModelAgain(model);
          // The warning clears by itself once exo serves the model again (the snapshot says so).
          return placed.alreadyPlaced ? `${model} is already placed on exo` : `Placing ${model} again on ${placed.nodes.join(' and ')}`;
        }),
      dismissLostModel: (model) => run(`lost:${model}`, () => bridge.dismissLostModel(model)),
    };

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
  });

  const applySnapshot = (snapshot: Snapshot): void => {
    store.setState((s) => {
      const ttftHistory: Record<string, TtftSample[]> = {};
      for (const instance of snapshot.instances) {
        ttftHistory[instance.id] = mergeTtftSamples(s.ttftHistory[instance.id] ?? [], instance.ttft.samples, ttftWindow);
      }
      return {
        snapshot,
        received: true,
        connection: 'connected',
        connectionError: null,
        connectionProblem: null,
        ttftHistory,
        applied: s.applied + 1,
        receivedAt: now(),
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
    bridge.subscribeAlerts?.((alerts) => store.setState({ alerts: alerts.filter((a) => !dismissedAlerts.has(a.id)) })) ?? (() => undefined);

  // The tray's "Open log" on a model's line (the Mac app).
  const unsubscribeOpenLog = bridge.subscribeOpenLog?.((source) => store.getState().actions.openLog(source)) ?? (() => undefined);

  return Object.assign(store, {
    dispose() {
      unsubscribeSnapshots();
      unsubscribeConnection();
      unsubscribeAlerts();
      unsubscribeOpenLog();
    },
  });
}
