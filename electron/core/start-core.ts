/**
 * Starts exobar's core outside Electron's concerns: the node (runners, queues,
 * snapshot) and the local API server on top of it. The Electron app and
 * `exobar serve` both start the core through this one function.
 */
import { fitForLaunch } from './fit/fit-for-launch';
import { logRoutes } from './logs/log-routes';
import { ownLogPath } from './logs/own-log';
import type { FitChecker } from './fit/fit-gate';
import type { Logger } from 'pino';
import type { Settings } from '../../shared/api';
import { createApiServer, DEFAULT_API_HOST, DEFAULT_API_PORT, type ApiServer } from './api/api-server';
import type { ApiRoute } from './api/route-types';
import { loadOrCreateToken } from './auth-token';
import { writeServerRecord } from './server-record';
import { createTerminalLogger, resolveLogFormat, resolveLogLevel } from './terminal-log';
import { ensureDataDir } from './data-dir';
import { controlRoutes } from './api/control-routes';
import { diagnosticsRoutes } from './diagnostics/diagnostics-routes';
import { attachStartedExo } from './exo/attach-started-exo';
import { ExoAttachment, type ExoAttachmentOptions, type ExoBundleSource } from './exo/exo-attachment';
import { lostModelRoutes } from './exo/cluster-events/lost-model-routes';
import { exoRoutes } from './exo/exo-routes';
import { ExoProcessManager, exoProcessRoutes, reportExoOutcome, reportExoProgress, showExoProcess, type ExoProcessManagerOptions } from './exo-process';
import { exoSafePairRoutes } from './exo/launch/exo-safe-pair-routes';
import { MlxRuntimeService } from './mlx/mlx-runtime-service';
import { mlxRoutes } from './mlx/mlx-routes';
import { ExobarMetrics } from './metrics/exobar-metrics';
import { metricsRoutes } from './metrics/metrics-route';
import { createNode } from './node/node';
import { openAiRoutes } from './api/openai-routes';
import { ollamaDialectRoutes, v1DialectRoutes } from './api/dialects/dialect-routes';
import { ModelLoader } from './on-demand/model-loader';
import { ttlFromSetting } from './on-demand/on-demand-settings';
import { logModelEvents, placementEvent } from './on-demand/model-events';
import { residencyRoutes } from './on-demand/residency-routes';
import { RequestFeed } from './request-log/request-feed';
import { RequestLog } from './request-log/request-log';
import { History } from './history/history';
import { historyRoutes } from './history/history-routes';
import { watchSlowerThanUsual } from './history/slower-warnings';
import { SnapshotHub } from './app-state/snapshot-hub';
import { EventLog } from './node/event-log';
import { launchSection, type ShowLaunch } from './safe-pair/launch-section';
import type { CatalogModel } from '../../shared/catalog';
import { requestLogRoutes } from './request-log/request-log-routes';
import type { ExobarNode } from './node/node-types';
import { packageVersion } from './package-root';
import { safePairRoutes } from './safe-pair/safe-pair-routes';
import { loadSettings, SettingsStore, type SettingsPatch } from './settings/settings-store';
import { CheckManager } from './checks/check-manager';
import { CHECK_POLICIES } from './checks/decode-experiment';
import { createPolicyOverride } from './pacing/policy-override';
import { createHoldOverride } from './checks/hold-override';
import { checkRoutes } from './checks/check-routes';

export interface StartCoreOptions {
  /** The data directory (token, settings, runner logs); created with mode 0700 if missing. */
  dataDir: string;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default: settings.apiPort, else 52416); 0 picks a free port. */
  port?: number;
  /** Multiplies every sim duration (1 = calibrated real time). */
  simTimeScale?: number;
  /**
   * Whether ended requests go into the request log (default true). Off only where its
   * cost is measured (the benchmark); the metrics and history count them either way.
   */
  logRequests?: boolean;
  /** How often the history's `slower_than_usual` verdicts are read again into the warnings (default each minute). */
  slowerCheckMs?: number;
  /** Settings to use; default: `<dataDir>/settings.json` (defaults when missing). */
  settings?: Settings;
  /** The settings now, for endpoints that read them per request (the app's settings can change while it runs). Default: `settings`. */
  getSettings?: () => Settings;
  /** The built renderer to serve at `/`; null serves only a "not built" page. Default: <repo>/out/renderer. */
  rendererDir?: string | null;
  /** Further endpoints, built once the node exists, beside the built-in ones (the safe launch is always there). */
  extraRoutes?: (core: {
    node: ExobarNode;
    settings: Settings;
    dataDir: string;
    logger: Logger;
    exoBundle: () => ExoBundleSource | null;
    exoProcess: ExoProcessManager;
    /** The launch section: where a safe launch's progress goes. */
    showLaunch: ShowLaunch;
  }) => ApiRoute[];
  /** Further browser origins the API accepts (a renderer dev server). */
  extraOrigins?: string[];
  logger?: Logger;
  /**
   * exobar's own log file, listed as the log source `exobar`: the one the given logger
   * also writes (createTerminalLogger's `ownLog`). Default `<dataDir>/exobar.log`, which
   * the core's own default logger writes.
   */
  ownLog?: string;
  /** Attach to this exo for this run instead of the `exo.url` setting (`exobar serve --exo URL`); null attaches to nothing. */
  exoUrl?: string | null;
  /** Attach mode's paths and polling (exo's log folder, where to look for an exo to offer); tests point them elsewhere. */
  exo?: Partial<Omit<ExoAttachmentOptions, 'node' | 'saveUrl'>>;
  /** Saves a settings change (attaching saves `exo.url`); default: `<dataDir>/settings.json`. */
  updateSettings?: (patch: SettingsPatch) => Promise<unknown>;
  /** This Mac's exo (docs/exo-process.md); by default the settings' `exo` section says whether and how it starts. */
  exoProcess?: ExoStartOptions;
  /** Models on demand: how often idle instances are checked against their time to live (tests). */
  onDemand?: { reapIntervalMs?: number };
  /** Replaces the launch fit check's memory readings (tests that need a Mac short of memory). */
  fitChecker?: FitChecker;
  /** Models the node may launch beyond the sim catalog and the MLX models found, read at each look-up (the bench's tiny models, tests). */
  extraModels?: () => readonly CatalogModel[];
}

/** How the core runs this Mac's exo. */
export interface ExoStartOptions {
  /** Start exo with the core (`exobar serve --exo-start`); default: the setting `exo.start`. */
  start?: boolean;
  /** Replaces `exo.command` (`--exo-command`). */
  command?: string;
  /** Where exo's progress goes, one line per change (the CLI's stderr); default: the core's log. */
  log?: (line: string) => void;
  /** The manager's port, timing, crash policy and base environment (tests). */
  manager?: Omit<ExoProcessManagerOptions, 'dataDir' | 'settings'>;
}

export interface RunningCore {
  node: ExobarNode;
  /** `http://host:port` of the API server (the OpenAI base URL is `${url}/v1`). */
  url: string;
  host: string;
  port: number;
  /** The control API's bearer token. */
  token: string;
  dataDir: string;
  settings: Settings;
  server: ApiServer;
  /** The MLX engine: runtime detection, local models, "Set up MLX runtime" (the app's IPC calls it directly). */
  mlx: MlxRuntimeService;
  /** Attach mode: the attached exo (if any), the offer, attach / detach / probe. */
  exo: ExoAttachment;
  /**
   * This Mac's exo as exobar runs it: idle until started (setting, flag or
   * `POST /api/exo/process/start`); its state is the snapshot's `exoProcess`, and
   * `thisMacFastSynch(exoProcess.state())` (shared/exo-process.ts) is this Mac's value
   * for the exo section.
   */
  exoProcess: ExoProcessManager;
  /** Checks on demand (`exobar check sharing`, `/api/checks`): runs one at a time, keeps the reports. */
  checks: CheckManager;
  /** The request log: every ended request; `recordModelEvent` puts a load or unload beside them. */
  requestLog: RequestLog;
  /** History per model and minute, 30 days. */
  history: History;
  /** The snapshot's launch section: where the app's safe launch reports its progress. */
  showLaunch: ShowLaunch;
  /** Closes the API server, shuts the node down (every runner stopped) and stops the exo exobar started (never one it attached to). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Creates the node and the API server; resolves once the server accepts connections.
 * If the server cannot listen (port taken), the node is shut down before rejecting.
 */
export async function startCore(options: StartCoreOptions): Promise<RunningCore> {
  const dataDir = await ensureDataDir(options.dataDir);
  const ownLog = options.ownLog ?? ownLogPath(dataDir);
  const logger =
    options.logger ??
    createTerminalLogger({
      format: resolveLogFormat({ env: process.env, isTTY: process.stderr.isTTY === true }),
      level: resolveLogLevel(process.env),
      ownLog,
    });
  const { token, source: tokenSource, path: tokenPath } = await loadOrCreateToken(dataDir);
  const settings = options.settings ?? (await loadSettings(dataDir, logger)).settings;
  const getSettings = options.getSettings ?? (() => settings);
  // Every launch's fit check keeps the settings' headroom free (tests replace the machine's readings).
  const fitChecker: FitChecker =
    options.fitChecker ??
    ((input) => fitForLaunch({ ...input, headroomBytes: getSettings().fit.headroomBytes, promptCacheBytes: getSettings().runner.promptCacheBytes }));
  const mlx = new MlxRuntimeService({ dataDir, getSettings });
  // The operator's sharing policy, which the sharing check overrides for its runs only.
  const sharingPolicy = createPolicyOverride(() => getSettings().sharing.policy);
  const eventLog = new EventLog();
  // Every part's snapshot section and warnings, through the one diff into the node's event log.
  const hub = new SnapshotHub({ version: packageVersion(), record: (event) => eventLog.record(event) });
  const node = createNode({
    dataDir,
    eventLog,
    hub,
    logger: logger.child({ component: 'runner' }),
    simTimeScale: options.simTimeScale,
    defaultFastSynch: settings.defaultFastSynch,
    watchdog: settings.watchdog,
    logGeneratedText: settings.debug.logGeneratedText,
    // Read at every decision: a settings change applies at once.
    sharingPolicy: sharingPolicy.current,
    mlxSpawnSpec: (model, engine) => mlx.spawnSpec(model, engine),
    extraModels: () => [...mlx.localModels, ...(options.extraModels?.() ?? [])],
    // Read at each instance's creation: a settings change applies to the next runner.
    runnerSettings: () => getSettings().runner,
    idleTtlSeconds: () => ttlFromSetting(getSettings().onDemand.idleTtlSeconds),
  });
  // Load on request and unload when idle (docs/on-demand.md).
  const modelLoader = new ModelLoader({ node, settings: getSettings, fitChecker, ...options.onDemand });
  modelLoader.start();
  mlx.attach(hub);
  const showLaunch = launchSection(hub);
  const exoCommand = options.exoProcess?.command;
  const exoProcess = new ExoProcessManager({
    apiPort: settings.exo.apiPort,
    ...options.exoProcess?.manager,
    dataDir,
    logger: logger.child({ component: 'exo-process' }),
    // Read at every start: a settings change applies at the next one.
    settings: () => ({ ...getSettings().exo, ...(exoCommand ? { command: exoCommand } : {}) }),
  });
  // Idle means exobar never started exo here: the views show nothing for it then.
  const stopShowingExoProcess = showExoProcess(exoProcess, hub);
  // Looking for Python and scanning model folders takes a moment: the API does not wait.
  void mlx.refresh().catch((error: unknown) => logger.warn({ err: error }, 'looking for the MLX runtime failed'));
  const updateSettings = options.updateSettings ?? (async (patch: SettingsPatch) => (await SettingsStore.open(dataDir, logger)).update(patch));
  // The operator's exo.hold, which the sharing check overrides for its runs on exo only.
  const hold = createHoldOverride(() => getSettings().exo.hold);
  const exo = new ExoAttachment({
    holdEnabled: hold.current,
    placeOnDemand: () => getSettings().exo.placeOnDemand,
    loadStallFloorMs: () => getSettings().exo.loadStallSeconds * 1000,
    // What exobar places on exo for a request unloads after the same idle time as a local model.
    idleTtlSeconds: () => ttlFromSetting(getSettings().onDemand.idleTtlSeconds),
    onPlacement: (event) => node.eventLog.record(placementEvent(event)),
    // exo's log is where exo keeps it with the environment exobar would start it with (an EXO_HOME in exo.env moves it).
    exoEnv: () => ({ ...process.env, ...getSettings().exo.env }),
    // A request for a model exo does not serve is exobar's: it loads on request there too.
    localRoutes: [...openAiRoutes({ loader: modelLoader }), ...v1DialectRoutes({ loader: modelLoader }), ...ollamaDialectRoutes({ loader: modelLoader })],
    ...options.exo,
    hub,
    saveUrl: (url) => updateSettings({ exo: { url } }).then(() => undefined),
  });
  // A bad saved address or a failed look-up must never keep the core from starting.
  void exo
    .start(options.exoUrl === undefined ? getSettings().exo.url : options.exoUrl)
    .catch((error: unknown) => logger.warn({ err: error }, 'attaching to exo failed'));
  // The exo exobar runs is attached to once its API answers: --exo-start alone shows the cluster.
  const stopAttachStarted = attachStartedExo(exoProcess, exo, (error) => logger.warn({ err: error }, 'attaching to the exo exobar started failed'));
  // Every ended request, local or through exobar to exo, as one record: the metrics count from it.
  const requestFeed = new RequestFeed(node, exo.serving.traffic);
  const metrics = new ExobarMetrics({ snapshot: () => node.snapshot(), mac: requestFeed.mac });
  requestFeed.onRecord((record, detail) => metrics.observeRequest(record, detail.itlGapsMs));
  // The last 10,000 requests, across restarts; a corrupt file is set aside and said here.
  const requestLog = new RequestLog({ dataDir });
  if (requestLog.status().problem) logger.warn({ component: 'request-log' }, requestLog.status().problem!);
  if (options.logRequests !== false) requestFeed.onRecord((record) => requestLog.record(record));
  // Loads and unloads (local, and exo placements on demand) beside the requests.
  const stopModelEvents = logModelEvents(node.eventLog, requestLog);
  // Per model and minute, 30 days: from the same records, the restarts and the snapshot's queues.
  const history = new History({ dataDir });
  if (history.status().problem) logger.warn({ component: 'history' }, history.status().problem!);
  requestFeed.onRecord((record) => history.observe(record));
  const stopHistoryEvents = node.eventLog.subscribe((event) => {
    if (event.kind !== 'runner_restart_scheduled') return;
    const model = node.snapshot().instances.find((i) => i.id === event.instanceId)?.model;
    if (model) history.restart(model);
  });
  const stopQueueSamples = node.onSnapshot((snapshot) => {
    const waiting = new Map<string, number>();
    for (const i of snapshot.instances) {
      const n = i.queue.requests.filter((r) => r.phase === 'queued' || r.phase === 'awaiting_ack').length;
      waiting.set(i.model, (waiting.get(i.model) ?? 0) + n);
    }
    for (const [model, n] of waiting) history.queue(model, n);
  }, 1_000);
  // slower_than_usual as an active warning, read from the history each minute.
  const stopSlowerWarnings = watchSlowerThanUsual(history, node, hub, options.slowerCheckMs);
  const stopMetricsEvents = node.eventLog.subscribe((event) => metrics.observeEvent(event));
  const bindHost = options.host ?? DEFAULT_API_HOST;
  // Endpoints of other parts of the core, on every API server (app and CLI alike).
  const localSafePair = safePairRoutes({ getSettings, fitChecker, launch: { onProgress: showLaunch } });
  // Checks on demand (GPU sharing), through this node's supervisor; reports kept in <dataDir>/checks.
  // Experiment 2 runs under each policy in turn; the operator's is back after it.
  // On exo, its requests go through this server's own /v1 (known once it listens), with the hold on and off.
  let ownUrl: string | null = null;
  const checks = new CheckManager({
    node,
    dataDir,
    decode: { policies: CHECK_POLICIES, applyPolicy: sharingPolicy.apply },
    exo: { exoUrl: () => exo.url, baseUrl: () => ownUrl, applyHold: hold.apply },
  });
  const coreRoutes: ApiRoute[] = [
    ...checkRoutes(checks),
    // While exo is attached the safe launch is on the cluster; else the local one answers.
    ...exoSafePairRoutes({
      exoUrl: () => exo.url,
      getSettings,
      fastSynchOf: exo.fastSynchOf,
      onProgress: showLaunch,
      localRoutes: localSafePair,
    }),
    ...localSafePair,
    ...mlxRoutes(mlx),
    ...logRoutes({ dataDir, ownLog, exoOwnLog: () => exo.localLogFile() }),
    ...diagnosticsRoutes({ dataDir, getSettings, exo: () => exo.bundleSource(), exoProcess, history: () => history.aggregates() }),
    // "Stop" on an exo instance deletes it on exo; a local one falls through to the node.
    ...exoRoutes(exo, controlRoutes({ fitChecker })),
    // Place again or dismiss a model exo took away (exo_model_lost).
    ...lostModelRoutes(exo),
    ...exoProcessRoutes({ manager: exoProcess, getSettings }),
    ...residencyRoutes(),
    ...requestLogRoutes(requestLog),
    ...historyRoutes(history),
    ...metricsRoutes({
      metrics,
      token,
      tokenFile: tokenSource === 'env' ? null : tokenPath,
      bindHost,
      isPublic: () => getSettings().metrics.public,
    }),
  ];
  const server = createApiServer({
    node,
    token,
    tokenFile: tokenSource === 'env' ? null : tokenPath,
    host: bindHost,
    port: options.port ?? settings.apiPort ?? DEFAULT_API_PORT,
    rendererDir: options.rendererDir,
    modelLoader,
    // The caller's routes come first, so a caller (a test) can stand in for a core route.
    // The exo proxy next: a request for an exo model goes to exo, anything else falls through to exobar's own /v1 routes.
    extraRoutes: [
      ...(options.extraRoutes?.({ node, settings, dataDir, logger, exoBundle: () => exo.bundleSource(), exoProcess, showLaunch }) ?? []),
      ...exo.routes,
      ...coreRoutes,
    ],
    extraOrigins: options.extraOrigins,
    logger: logger.child({ component: 'api' }),
    fitChecker,
  });
  let listening: { url: string; host: string; port: number };
  try {
    listening = await server.listen();
  } catch (error) {
    await exo.stop();
    modelLoader.stop();
    await Promise.all([node.shutdown(), exoProcess.shutdown()]);
    throw error;
  }
  const apiSection = hub.section('api', () => ({ apiBaseUrl: `${listening.url}/v1` }));
  ownUrl = listening.url;
  // Every change of exo's state is said (stderr for the CLI, the log for the app), whoever started it.
  const exoLog = options.exoProcess?.log ?? ((line: string) => logger.info({ component: 'exo-process' }, line));
  reportExoProgress(exoProcess, exoLog);
  if (options.exoProcess?.start ?? settings.exo.start) {
    // Not awaited: exo may take minutes to answer (an election); the state shows the progress.
    exoProcess.start({ instances: [], override: settings.defaultFastSynch, acknowledgeRisk: false }).then(
      (state) => reportExoOutcome(state, exoLog),
      (error: unknown) => exoLog(`exo: not started: ${(error as Error).message}`),
    );
  }
  // Where this server listens, for `exobar diagnostics` (any port); a failure to write it
  // costs only that convenience, never the server.
  const removeRecord = await writeServerRecord(dataDir, {
    url: listening.url,
    pid: process.pid,
    tokenPath: tokenSource === 'env' ? null : tokenPath,
    startedAt: Date.now(),
  }).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not record the server in the data directory');
    return async () => undefined;
  });

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      stopAttachStarted();
      apiSection.remove();
      modelLoader.stop();
      // Both at once: the node's shutdown ends in-flight requests (their responses close),
      // the server stops accepting and ends the event streams, exo stops if exobar started it.
      await Promise.all([server.close(), node.shutdown(), exo.stop(), exoProcess.shutdown(), removeRecord()]);
      stopMetricsEvents();
      requestFeed.close();
      stopModelEvents();
      requestLog.close();
      stopHistoryEvents();
      stopQueueSamples();
      stopSlowerWarnings();
      stopShowingExoProcess();
      history.close();
      hub.close();
    })();
    return stopping;
  };

  return {
    node,
    url: listening.url,
    host: listening.host,
    port: listening.port,
    token,
    dataDir,
    settings,
    server,
    mlx,
    exo,
    exoProcess,
    requestLog,
    history,
    checks,
    showLaunch,
    stop,
  };
}
