/**
 * Starts exobar's core outside Electron's concerns: the node (runners, queues,
 * snapshot) and the local API server on top of it. The Electron app and
 * `exobar serve` both start the core through this one function.
 */
import pino, { type Logger } from 'pino';
import type { Settings } from '../../shared/api';
import { createApiServer, DEFAULT_API_HOST, DEFAULT_API_PORT, type ApiServer } from './api/api-server';
import type { ApiRoute } from './api/route-types';
import { loadOrCreateToken } from './auth-token';
import { ensureDataDir } from './data-dir';
import { controlRoutes } from './api/control-routes';
import { diagnosticsRoutes } from './diagnostics/diagnostics-routes';
import { ExoAttachment, type ExoAttachmentOptions, type ExoBundleSource } from './exo/exo-attachment';
import { exoRoutes } from './exo/exo-routes';
import { exoSafePairRoutes } from './exo/launch/exo-safe-pair-routes';
import { MlxRuntimeService } from './mlx/mlx-runtime-service';
import { mlxRoutes } from './mlx/mlx-routes';
import { createNode } from './node';
import type { ExobarNode } from './node-types';
import { packageVersion } from './package-root';
import { safePairRoutes } from './safe-pair/safe-pair-routes';
import { loadSettings, SettingsStore, type SettingsPatch } from './settings/settings-store';

export interface StartCoreOptions {
  /** The data directory (token, settings, runner logs); created with mode 0700 if missing. */
  dataDir: string;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default: settings.apiPort, else 52416); 0 picks a free port. */
  port?: number;
  /** Multiplies every sim duration (1 = calibrated real time). */
  simTimeScale?: number;
  /** Settings to use; default: `<dataDir>/settings.json` (defaults when missing). */
  settings?: Settings;
  /** The settings now, for endpoints that read them per request (the app's settings can change while it runs). Default: `settings`. */
  getSettings?: () => Settings;
  /** The built renderer to serve at `/`; null serves only a "not built" page. Default: <repo>/out/renderer. */
  rendererDir?: string | null;
  /** Further endpoints, built once the node exists, beside the built-in ones (the safe launch is always there). */
  extraRoutes?: (core: { node: ExobarNode; settings: Settings; dataDir: string; logger: Logger; exoBundle: () => ExoBundleSource | null }) => ApiRoute[];
  /** Further browser origins the API accepts (a renderer dev server). */
  extraOrigins?: string[];
  logger?: Logger;
  /** Attach to this exo for this run instead of the `exo.url` setting (`exobar serve --exo URL`); null attaches to nothing. */
  exoUrl?: string | null;
  /** Attach mode's paths and polling (exo's log folder, where to look for an exo to offer); tests point them elsewhere. */
  exo?: Partial<Omit<ExoAttachmentOptions, 'node' | 'saveUrl'>>;
  /** Saves a settings change (attaching saves `exo.url`); default: `<dataDir>/settings.json`. */
  updateSettings?: (patch: SettingsPatch) => Promise<unknown>;
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
  /** Closes the API server and shuts the node down (every runner stopped). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Creates the node and the API server; resolves once the server accepts connections.
 * If the server cannot listen (port taken), the node is shut down before rejecting.
 */
export async function startCore(options: StartCoreOptions): Promise<RunningCore> {
  const logger = options.logger ?? pino({ name: 'exobar', level: process.env.EXOBAR_LOG_LEVEL ?? 'info' }, pino.destination(2));
  const dataDir = await ensureDataDir(options.dataDir);
  const { token } = await loadOrCreateToken(dataDir);
  const settings = options.settings ?? (await loadSettings(dataDir, logger)).settings;
  const getSettings = options.getSettings ?? (() => settings);
  const mlx = new MlxRuntimeService({ dataDir, getSettings });
  const node = createNode({
    dataDir,
    simTimeScale: options.simTimeScale,
    defaultFastSynch: settings.defaultFastSynch,
    watchdog: settings.watchdog,
    version: packageVersion(),
    mlxSpawnSpec: (model) => mlx.spawnSpec(model),
  });
  mlx.attach(node);
  // Looking for Python and scanning model folders takes a moment: the API does not wait.
  void mlx.refresh().catch((error: unknown) => logger.warn({ err: error }, 'looking for the MLX runtime failed'));
  const updateSettings = options.updateSettings ?? (async (patch: SettingsPatch) => (await SettingsStore.open(dataDir, logger)).update(patch));
  const exo = new ExoAttachment({
    holdEnabled: () => getSettings().exo.hold,
    ...options.exo,
    node,
    saveUrl: (url) => updateSettings({ exo: { url } }).then(() => undefined),
  });
  // A bad saved address or a failed look-up must never keep the core from starting.
  void exo.start(options.exoUrl === undefined ? getSettings().exo.url : options.exoUrl).catch((error: unknown) => logger.warn({ err: error }, 'attaching to exo failed'));
  // Endpoints of other parts of the core, on every API server (app and CLI alike).
  const localSafePair = safePairRoutes({ getSettings });
  const coreRoutes: ApiRoute[] = [
    // While exo is attached the safe launch is on the cluster; else the local one answers.
    ...exoSafePairRoutes({ exoUrl: () => exo.url, getSettings, fastSynchOf: exo.fastSynchOf, onProgress: (p) => node.setLaunchProgress(p), localRoutes: localSafePair }),
    ...localSafePair,
    ...mlxRoutes(mlx),
    ...diagnosticsRoutes({ dataDir, getSettings, exo: () => exo.bundleSource() }),
    // "Stop" on an exo instance deletes it on exo; a local one falls through to the node.
    ...exoRoutes(exo, controlRoutes()),
  ];
  const server = createApiServer({
    node,
    token,
    host: options.host ?? DEFAULT_API_HOST,
    port: options.port ?? settings.apiPort ?? DEFAULT_API_PORT,
    rendererDir: options.rendererDir,
    // The caller's routes come first, so a caller (a test) can stand in for a core route.
    // The exo proxy next: a request for an exo model goes to exo, anything else falls through to exobar's own /v1 routes.
    extraRoutes: [...(options.extraRoutes?.({ node, settings, dataDir, logger, exoBundle: () => exo.bundleSource() }) ?? []), ...exo.routes, ...coreRoutes],
    extraOrigins: options.extraOrigins,
    logger: logger.child({ component: 'api' }),
  });
  let listening: { url: string; host: string; port: number };
  try {
    listening = await server.listen();
  } catch (error) {
    await exo.stop();
    await node.shutdown();
    throw error;
  }
  node.setApiBaseUrl(`${listening.url}/v1`);

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      node.setApiBaseUrl(null);
      // Both at once: the node's shutdown ends in-flight requests (their responses close),
      // the server stops accepting and ends the event streams.
      await Promise.all([server.close(), node.shutdown(), exo.stop()]);
    })();
    return stopping;
  };

  return { node, url: listening.url, host: listening.host, port: listening.port, token, dataDir, settings, server, mlx, exo, stop };
}
