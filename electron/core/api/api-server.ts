/**
 * The local API server: plain Node http, OpenAI-compatible endpoints under /v1, the
 * control API under /api (bearer token), the renderer at /. Every request passes the
 * Host and Origin checks first; every refused input is answered, counted and logged
 * (without its body or any token), and the server keeps serving.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino, { type Logger } from 'pino';
import type { ExobarNode } from '../node/node-types';
import type { FitChecker } from '../fit/fit-gate';
import { controlRoutes } from './control-routes';
import { allowedHostNames, hostForUrl, type OriginPolicy } from './http-security';
import { openAiRoutes } from './openai-routes';
import { ollamaDialectRoutes, v1DialectRoutes } from './dialects/dialect-routes';
import type { ModelLoader } from '../on-demand/model-loader';
import { bodyLimitForContext, type BodyLimit } from './read-json-body';
import { RouteTable, type ApiRoute } from './route-types';
import { defaultRendererDir } from './static-files';
import { createRequestHandler, type Boundary } from './request-handler';
import { inProcessExchange, type DispatchAnswer, type DispatchRequest } from './in-process-exchange';
import { EXOBAR_API_PORT } from '../../../shared/addresses';

/** exobar's default port: next to exo's 52415, so both can run on one Mac. */
export const DEFAULT_API_PORT = EXOBAR_API_PORT;
export const DEFAULT_API_HOST = '127.0.0.1';

export interface ApiServerOptions {
  node: ExobarNode;
  /** The control API's bearer token. */
  token: string;
  /** The token file's path, said in a refusal (null: the token came from EXOBAR_TOKEN). */
  tokenFile?: string | null;
  /** Interface to bind; loopback unless the user asks otherwise. */
  host?: string;
  /** Port to listen on; 0 picks a free one. */
  port?: number;
  /** The built renderer; null serves only the "not built" page. Default: <repo>/out/renderer. */
  rendererDir?: string | null;
  /** A fixed body limit (tests); default: sized from the largest context of the models served (read-json-body.ts). */
  bodyLimitBytes?: number;
  /** More endpoints (e.g. the safe launch, the diagnostic bundle), matched before the built-in ones. */
  extraRoutes?: ApiRoute[];
  /** Loads a model a chat request names when it is not running (models on demand); absent: such a request gets 404. */
  modelLoader?: ModelLoader;
  /** Further browser origins to accept exactly (e.g. a renderer dev server). */
  extraOrigins?: string[];
  /** Further host names to accept in the Host header. */
  allowedHosts?: string[];
  logger?: Logger;
  /** Replaces the fit check's memory readings of a launch (tests). */
  fitChecker?: FitChecker;
}

export interface ApiServer {
  /** Starts listening; resolves once connections are accepted. */
  listen(): Promise<{ url: string; host: string; port: number }>;
  /**
   * Stops accepting connections and ends the snapshot event streams. Answers in flight
   * (completions) get `graceMs` (default 2 s) to finish, time for the node's shutdown to
   * end them with a clear error; whatever is left then is cut.
   */
  close(graceMs?: number): Promise<void>;
  /** `http://host:port` once listening. */
  readonly url: string;
  /** Inputs refused at the HTTP boundary so far. */
  rejectedInputs(): number;
  /**
   * Answers one request from the same route table, in process (no socket): main's IPC
   * handler sends the page's actions here once it has checked the sender, so an action
   * has one implementation, its route. Errors come back in the route's one error shape
   * (`ApiErrorBody`); refused inputs are counted on the `ipc` boundary.
   */
  dispatch(request: DispatchRequest): Promise<DispatchAnswer>;
}

/** Creates the API server (not yet listening). */
export function createApiServer(options: ApiServerOptions): ApiServer {
  const host = options.host ?? DEFAULT_API_HOST;
  const log = options.logger ?? pino({ level: 'silent' });
  // Read at each request: the models served (the MLX scan) change while the server runs.
  const limit = (): number | BodyLimit => {
    if (options.bodyLimitBytes !== undefined) return options.bodyLimitBytes;
    const contexts = options.node.models().map((m) => m.contextLength ?? 0);
    const largest = Math.max(0, ...contexts);
    return bodyLimitForContext(largest > 0 ? largest : null);
  };
  const rendererDir = options.rendererDir === undefined ? defaultRendererDir() : options.rendererDir;
  const table = new RouteTable([
    ...(options.extraRoutes ?? []),
    ...openAiRoutes({ loader: options.modelLoader }),
    ...v1DialectRoutes({ loader: options.modelLoader }),
    ...controlRoutes({ fitChecker: options.fitChecker }),
    // After the control routes: an Ollama path can never shadow one.
    ...ollamaDialectRoutes({ loader: options.modelLoader }),
  ]);
  const streams = new Set<() => void>();
  let rejectedCount = 0;
  let policy: OriginPolicy = {
    hostNames: allowedHostNames(host, options.allowedHosts),
    port: options.port ?? DEFAULT_API_PORT,
    extraOrigins: new Set((options.extraOrigins ?? []).map((o) => o.toLowerCase())),
  };
  let url = '';

  // Every refused input shows in the snapshot's rejectedInputs.http (docs/architecture.md, invariant 5).
  const countRejected = (code: string, boundary: Boundary = 'http'): void => {
    if (boundary === 'http') rejectedCount += 1;
    options.node.countRejectedInput(boundary);
    log.debug({ code }, 'input refused');
  };
  const handle = createRequestHandler({
    table,
    policy: () => policy,
    token: options.token,
    tokenFile: options.tokenFile,
    node: options.node,
    log,
    bodyLimit: limit,
    rendererDir,
    streams,
    countRejected,
  });

  const server: Server = createServer({ noDelay: true, keepAliveTimeout: 5_000 }, (req, res) => {
    void handle(req, res);
  });
  // A malformed request line or headers: Node answers 400 itself; count it and keep serving.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    countRejected('malformed_http');
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  return {
    get url() {
      return url;
    },
    rejectedInputs: () => rejectedCount,
    dispatch(request) {
      const exchange = inProcessExchange(request);
      void handle(exchange.req, exchange.res, 'ipc');
      return exchange.answer;
    },
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (error: NodeJS.ErrnoException): void => {
          server.off('listening', onListening);
          if (error.code === 'EADDRINUSE')
            reject(new Error(`port ${options.port ?? DEFAULT_API_PORT} on ${host} is already in use; pick another with --port N (or --port 0 for a free one)`));
          else reject(error);
        };
        const onListening = (): void => {
          server.off('error', onError);
          const port = (server.address() as AddressInfo).port;
          policy = { ...policy, port };
          url = `http://${hostForUrl(host)}:${port}`;
          server.on('error', (error) => log.error({ err: error.message }, 'server error'));
          resolve({ url, host, port });
        };
        server.once('error', onError);
        server.once('listening', onListening);
        server.listen(options.port ?? DEFAULT_API_PORT, host);
      });
    },
    close(graceMs = 2_000) {
      return new Promise((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        for (const end of [...streams]) end();
        streams.clear();
        server.closeIdleConnections();
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        cut.unref();
        server.once('close', () => clearTimeout(cut));
      });
    },
  };
}
