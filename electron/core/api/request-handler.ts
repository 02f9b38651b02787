/**
 * One request through the API's route table, whichever way it came: over HTTP every
 * check applies (Host, Origin, the bearer token, the page's static files); in process
 * (`ipc`, main's IPC handler) main has checked its sender, so none of those do. Every
 * request is logged in one line (never its query or body), and every failure is
 * answered in the route's one error shape and counted when it refused an input. Apart
 * from the server's socket handling (api-server.ts), so both ways share this one path.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ExobarNode } from '../node/node-types';
import { ApiError, errorBody, toApiError } from './api-error';
import { checkBearer } from './bearer-auth';
import { checkHost, checkOrigin, setCommonSecurityHeaders, type OriginPolicy } from './http-security';
import { REQUEST_ID_HEADER } from './openai-routes';
import { readJsonBody, type BodyLimit } from './read-json-body';
import type { RouteContext, RouteTable } from './route-types';
import { serveStatic } from './static-files';

/** Where a request came from: a socket, or main's IPC handler in process. */
export type Boundary = 'http' | 'ipc';

export interface RequestHandlerDeps {
  table: RouteTable;
  /** The Host and Origin policy now (its port is known once the server listens). */
  policy(): OriginPolicy;
  token: string;
  tokenFile?: string | null;
  node: ExobarNode;
  log: Logger;
  /** The JSON body limit now (it follows the models served). */
  bodyLimit(): number | BodyLimit;
  rendererDir: string | null;
  /** Open event streams' ends, so a close can end them. */
  streams: Set<() => void>;
  countRejected(code: string, boundary: Boundary): void;
}

/** True for the API's paths (/v1 and /api, and under them); the rest is the page. */
function isApiPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/') || path === '/api' || path.startsWith('/api/');
}

/** Makes the handler of one request. */
export function createRequestHandler(deps: RequestHandlerDeps): (req: IncomingMessage, res: ServerResponse, boundary?: Boundary) => Promise<void> {
  const { table, node, log, streams, countRejected, rendererDir } = deps;
  const sendError = (req: IncomingMessage, res: ServerResponse, error: ApiError, boundary: Boundary, shape: (error: ApiError) => unknown = errorBody): void => {
    if (error.rejectedInput) countRejected(error.code, boundary);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const headers: Record<string, string> = { ...error.options.headers };
    // An unread body would be taken for the next request on this connection: close it.
    if (!req.complete) headers.Connection = 'close';
    sendJson(res, error.status, shape(error), headers);
  };

  /** One request: over HTTP every check applies; in process (`ipc`) main has checked its sender, so Host, Origin and the token do not, and there is no page to serve. */
  return async (req: IncomingMessage, res: ServerResponse, boundary: Boundary = 'http'): Promise<void> => {
    const arrivedAt = performance.now();
    setCommonSecurityHeaders(res);
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    // The path only: a query string is never logged.
    const pathname = rawUrl.split('?')[0] ?? '/';
    // Every /v1 answer names its request; a chat completion replaces this with its own id.
    if (pathname === '/v1' || pathname.startsWith('/v1/')) res.setHeader(REQUEST_ID_HEADER, `req-${randomBytes(12).toString('hex')}`);
    // One line per request, at info for the API (the operator's record of what clients
    // asked), at debug for the page's static files.
    const logFields: Record<string, unknown> = {};
    let errorShape: ((error: ApiError) => unknown) | undefined;
    res.on('finish', () => {
      const line = { method, path: pathname, status: res.statusCode, ms: Math.round((performance.now() - arrivedAt) * 10) / 10, ...logFields };
      if (isApiPath(pathname)) log.info(line, 'request');
      else log.debug(line, 'request');
    });
    try {
      const refusal = boundary === 'ipc' ? null : (checkHost(req.headers.host, deps.policy()) ?? checkOrigin(req.headers.origin, deps.policy()));
      if (refusal) throw refusal;
      if (!rawUrl.startsWith('/')) throw new ApiError(400, 'invalid_path', 'the request target must be a path');
      const parsedUrl = new URL(rawUrl, 'http://exobar.invalid');
      const match = table.match(method, parsedUrl.pathname);
      if ('allowed' in match) {
        if (match.allowed.length > 0) {
          throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${parsedUrl.pathname}; use ${match.allowed.join(' or ')}`, {
            headers: { Allow: match.allowed.join(', ') },
          });
        }
        if (isApiPath(parsedUrl.pathname) || boundary === 'ipc') {
          const near = table.nearest(parsedUrl.pathname);
          const these = near.length > 0 ? `; the endpoints there are ${near.join(', ')}` : '';
          throw new ApiError(404, 'not_found', `no endpoint ${method} ${parsedUrl.pathname}${these} (all of them: docs/api.md)`);
        }
        if (method !== 'GET' && method !== 'HEAD')
          throw new ApiError(405, 'method_not_allowed', `${method} is not allowed here`, { headers: { Allow: 'GET, HEAD' } });
        await serveStatic(req, res, parsedUrl.pathname, rendererDir);
        return;
      }
      if (match.route.auth && boundary === 'http') {
        const authRefusal = checkBearer(req, deps.token, deps.tokenFile);
        if (authRefusal) throw authRefusal;
      }
      const ctx: RouteContext = {
        req,
        res,
        url: parsedUrl,
        params: match.params,
        arrivedAt,
        node,
        log,
        logFields,
        body: <S extends z.ZodType>(schema: S) => readJsonBody(req, schema, deps.bodyLimit()),
        json: (status, body, headers) => sendJson(res, status, body, headers),
        useErrorBody(shape) {
          errorShape = shape;
        },
        trackStream(end) {
          streams.add(end);
          return () => streams.delete(end);
        },
      };
      await match.route.handle(ctx);
    } catch (error) {
      const apiError = toApiError(error);
      if (apiError.status >= 500)
        log.error(
          { err: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error), path: pathname },
          'request failed',
        );
      else log.debug({ path: pathname, status: apiError.status, code: apiError.code }, 'request refused');
      sendError(req, res, apiError, boundary, errorShape);
    }
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}
