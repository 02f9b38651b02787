/**
 * Starts exobar's core outside Electron's concerns: the node (runners, queues,
 * snapshot) and the local API server on top of it. The Electron app and
 * `exobar serve` both start the core through this one function.
 */
import { readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import type { Settings } from '../../shared/api';
import { createApiServer, DEFAULT_API_HOST, DEFAULT_API_PORT, type ApiServer } from './api/api-server';
import type { ApiRoute } from './api/route-types';
import { loadOrCreateToken } from './auth-token';
import { ensureDataDir } from './data-dir';
import { diagnosticsRoutes } from './diagnostics/diagnostics-routes';
import { MlxRuntimeService } from './mlx/mlx-runtime-service';
import { mlxRoutes } from './mlx/mlx-routes';
import { createNode } from './node';
import type { ExobarNode } from './node-types';
import { safePairRoutes } from './safe-pair/safe-pair-routes';
import { loadSettings } from './settings/settings-store';

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
  extraRoutes?: (core: { node: ExobarNode; settings: Settings; dataDir: string; logger: Logger }) => ApiRoute[];
  /** Further browser origins the API accepts (a renderer dev server). */
  extraOrigins?: string[];
  logger?: Logger;
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
  /** Closes the API server and shuts the node down (every runner stopped). Idempotent. */
  stop(): Promise<void>;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
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
    logGeneratedText: settings.debug.logGeneratedText,
    version: packageVersion(),
    mlxSpawnSpec: (model) => mlx.spawnSpec(model),
  });
  mlx.attach(node);
  // Looking for Python and scanning model folders takes a moment: the API does not wait.
  void mlx.refresh().catch((error: unknown) => logger.warn({ err: error }, 'looking for the MLX runtime failed'));
  // Endpoints of other parts of the core, on every API server (app and CLI alike).
  const coreRoutes: ApiRoute[] = [...safePairRoutes({ getSettings }), ...mlxRoutes(mlx), ...diagnosticsRoutes({ dataDir, getSettings })];
  const server = createApiServer({
    node,
    token,
    host: options.host ?? DEFAULT_API_HOST,
    port: options.port ?? settings.apiPort ?? DEFAULT_API_PORT,
    rendererDir: options.rendererDir,
    // The caller's routes come first, so a caller (a test) can stand in for a core route.
    extraRoutes: [...(options.extraRoutes?.({ node, settings, dataDir, logger }) ?? []), ...coreRoutes],
    extraOrigins: options.extraOrigins,
    logger: logger.child({ component: 'api' }),
  });
  let listening: { url: string; host: string; port: number };
  try {
    listening = await server.listen();
  } catch (error) {
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
      await Promise.all([server.close(), node.shutdown()]);
    })();
    return stopping;
  };

  return { node, url: listening.url, host: listening.host, port: listening.port, token, dataDir, settings, server, mlx, stop };
}
