/**
 * Starts exobar's core outside Electron's concerns: the node (runners, queues), the
 * snapshot hub every view reads, the features in order (each folder's `start…`), and
 * the local API server on top of them. The Electron app and `exobar serve` both start
 * the core through this one function; its stop stops the features in reverse.
 */
import { createApiServer, DEFAULT_API_HOST, DEFAULT_API_PORT } from './api/api-server';
import { SnapshotHub } from './app-state/snapshot-hub';
import { loadOrCreateToken } from './auth-token';
import { startChecks } from './checks/checks-feature';
import { FeatureList, type CoreContext } from './core-feature';
import { ensureDataDir } from './data-dir';
import { startDiagnostics } from './diagnostics/diagnostics-feature';
import { startExoProcess } from './exo-process/exo-process-feature';
import { startExo } from './exo/attach/exo-feature';
import { fitForLaunch } from './fit/fit-for-launch';
import type { FitChecker } from './fit/fit-gate';
import { startHistory } from './history/history-feature';
import { ownLogPath } from './logs/own-log';
import { startMetrics } from './metrics/metrics-feature';
import { startMlx } from './mlx/mlx-feature';
import { EventLog } from './node/event-log';
import { createNode } from './node/node';
import { startOnDemand } from './on-demand/on-demand-feature';
import { ttlFromSetting } from './on-demand/on-demand-settings';
import { packageVersion } from './package-root';
import { createPolicyOverride } from './pacing/policy-override';
import { startRequestLog } from './request-log/request-log-feature';
import { startSafePair } from './safe-pair/safe-pair-feature';
import { recordServer } from './server-record';
import { loadSettings } from './settings/settings-store';
import type { RunningCore, StartCoreOptions } from './start-core-options';
import { createTerminalLogger, resolveLogFormat, resolveLogLevel } from './terminal-log';

export type { ExoStartOptions, RunningCore, StartCoreOptions } from './start-core-options';

/**
 * Creates the node, starts the features and the API server; resolves once the server
 * accepts connections. If the server cannot listen (port taken), everything started is stopped before rejecting.
 */
export async function startCore(options: StartCoreOptions): Promise<RunningCore> {
  const dataDir = await ensureDataDir(options.dataDir);
  const ownLog = options.ownLog ?? ownLogPath(dataDir);
  const logger =
    options.logger ??
    createTerminalLogger({ format: resolveLogFormat({ env: process.env, isTTY: process.stderr.isTTY === true }), level: resolveLogLevel(process.env), ownLog });
  const { token, source: tokenSource, path: tokenPath } = await loadOrCreateToken(dataDir);
  const tokenFile = tokenSource === 'env' ? null : tokenPath;
  const settings = options.settings ?? (await loadSettings(dataDir, logger)).settings;
  const getSettings = options.getSettings ?? (() => settings);
  // Every launch's fit check keeps the settings' headroom free (tests replace the machine's readings).
  const fitChecker: FitChecker =
    options.fitChecker ??
    ((input) => fitForLaunch({ ...input, headroomBytes: getSettings().fit.headroomBytes, promptCacheBytes: getSettings().runner.promptCacheBytes }));
  const eventLog = new EventLog();
  // Every part's snapshot section and warnings, through the one diff into the node's event log.
  const hub = new SnapshotHub({ version: packageVersion(), record: (event) => eventLog.record(event) });
  const ctx: CoreContext = { dataDir, logger, settings, getSettings, hub, eventLog, fitChecker };
  const features = new FeatureList();

  const { mlx } = features.add(startMlx(ctx));
  // The operator's sharing policy, which the sharing check overrides for its runs only.
  const sharingPolicy = createPolicyOverride(() => getSettings().sharing.policy);
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
    whyModelAbsent: (id) => mlx.whyModelAbsent(id),
    // Read at each instance's creation: a settings change applies to the next runner.
    runnerSettings: () => getSettings().runner,
    idleTtlSeconds: () => ttlFromSetting(getSettings().onDemand.idleTtlSeconds),
  });
  const { modelLoader } = features.add(startOnDemand(ctx, node, options.onDemand));
  const { exoProcess, startIfAsked: startExoIfAsked } = features.add(startExoProcess(ctx, options.exoProcess));
  const exoOptions = { node, exoProcess, loader: modelLoader, updateSettings: options.updateSettings, exoUrl: options.exoUrl, attachment: options.exo };
  const { exo, proxyRoutes, hold } = features.add(startExo(ctx, exoOptions));
  const { showLaunch } = features.add(startSafePair(ctx, exo));
  const { requestFeed, requestLog } = features.add(startRequestLog(ctx, { node, traffic: exo.serving.traffic, logRequests: options.logRequests !== false }));
  const bindHost = options.host ?? DEFAULT_API_HOST;
  features.add(startMetrics(ctx, { node, feed: requestFeed, token, tokenFile, bindHost }));
  const { history } = features.add(startHistory(ctx, { node, feed: requestFeed, slowerCheckMs: options.slowerCheckMs }));
  let ownUrl: string | null = null;
  const { checks } = features.add(startChecks(ctx, { node, exo, sharingPolicy, hold, ownUrl: () => ownUrl }));
  features.add(startDiagnostics(ctx, { ownLog, exo, exoProcess, history }));

  const server = createApiServer({
    node,
    token,
    tokenFile,
    host: bindHost,
    port: options.port ?? settings.apiPort ?? DEFAULT_API_PORT,
    rendererDir: options.rendererDir,
    modelLoader,
    // The caller's routes come first, so a caller (a test) can stand in for a core route.
    // The exo proxy next: a request for an exo model goes to exo, anything else falls through to exobar's own /v1 routes.
    extraRoutes: [
      ...(options.extraRoutes?.({ node, settings, dataDir, logger, exoBundle: () => exo.bundleSource(), exoProcess, showLaunch }) ?? []),
      ...proxyRoutes,
      ...features.routes(),
    ],
    extraOrigins: options.extraOrigins,
    logger: logger.child({ component: 'api' }),
    fitChecker,
  });
  let listening: { url: string; host: string; port: number };
  try {
    listening = await server.listen();
  } catch (error) {
    await Promise.all([node.shutdown(), features.stop()]);
    hub.close();
    throw error;
  }
  ownUrl = listening.url;
  startExoIfAsked();
  const removeRecord = await recordServer(dataDir, { url: listening.url, pid: process.pid, tokenPath: tokenFile, startedAt: Date.now() }, logger);
  // Stopped first: the node's shutdown ends in-flight requests (their responses close) while the server stops accepting and ends the event streams.
  features.add({
    sections: [hub.section('api', () => ({ apiBaseUrl: `${listening.url}/v1` }))],
    stop: async () => void (await Promise.all([server.close(), node.shutdown(), removeRecord()])),
  });

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= features.stop().finally(() => hub.close());
    return stopping;
  };
  return { node, ...listening, token, dataDir, settings, server, mlx, exo, exoProcess, requestLog, history, checks, showLaunch, stop };
}
