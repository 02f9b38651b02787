/**
 * What a route is and what its handler gets. Other parts of exobar (the safe launch,
 * the diagnostic bundle) add their endpoints as {@link ApiRoute}s.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ExobarNode } from '../node/node-types';
import type { ApiError } from './api-error';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request URL (path and query; never logged with its query). */
  url: URL;
  /** Values of the pattern's `:name` segments, URL-decoded. */
  params: Record<string, string>;
  /** `performance.now()` when the request arrived: the start of its time to first token. */
  arrivedAt: number;
  node: ExobarNode;
  log: Logger;
  /** Fields the request's one log line adds (a route sets `model` once it knows it). */
  logFields: Record<string, unknown>;
  /** Reads, parses and validates the JSON body (size-limited); throws a counted 400/413/415. */
  body<S extends z.ZodType>(schema: S): Promise<z.output<S>>;
  /** Answers with JSON. */
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /**
   * Registers a long-lived response that has no end of its own (the snapshot event
   * stream) so it ends when the server stops; returns the unregister function.
   */
  trackStream(end: () => void): () => void;
  /**
   * Answers this request's errors in another API dialect's shape (Anthropic's, Ollama's)
   * instead of OpenAI's. A method, so it holds through a context a route layer copied.
   */
  useErrorBody?(shape: (error: ApiError) => unknown): void;
}

export interface ApiRoute {
  method: HttpMethod;
  /**
   * Path pattern; `:name` matches one segment (`/api/instances/:id`), a last `:name*`
   * the rest of the path (model ids hold slashes: `/v1/models/sim/llama-3.2-1b`).
   */
  path: string;
  /** True: the request needs `Authorization: Bearer <token>`. */
  auth: boolean;
  handle(ctx: RouteContext): Promise<void> | void;
}

export interface RouteMatch {
  route: ApiRoute;
  params: Record<string, string>;
}

interface CompiledRoute {
  route: ApiRoute;
  segments: string[];
}

/** Matches paths to routes; tells "no such path" (404) from "wrong method" (405). */
export class RouteTable {
  private readonly compiled: CompiledRoute[];

  constructor(routes: readonly ApiRoute[]) {
    this.compiled = routes.map((route) => ({ route, segments: route.path.split('/').filter(Boolean) }));
  }

  /** The route, or the methods the path allows (empty: no such path). */
  match(method: string, pathname: string): RouteMatch | { allowed: string[] } {
    const parts = pathname.split('/').filter(Boolean);
    const allowed: string[] = [];
    for (const { route, segments } of this.compiled) {
      const params = matchSegments(segments, parts);
      if (params == null) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
      allowed.push(route.method);
    }
    return { allowed };
  }

  /**
   * The endpoints nearest a path that matched none ("GET /v1/models", …): those sharing
   * its first two segments, else its first one; what a 404 names so a client sees what
   * exists.
   */
  nearest(pathname: string): string[] {
    const parts = pathname.split('/').filter(Boolean);
    for (const depth of [2, 1]) {
      if (parts.length < depth) continue;
      const prefix = parts.slice(0, depth);
      const near = this.compiled.filter(({ segments }) => prefix.every((p, i) => segments[i] === p)).map(({ route }) => `${route.method} ${route.path}`);
      if (near.length > 0) return [...new Set(near)];
    }
    return [];
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  const rest = pattern.length > 0 && pattern[pattern.length - 1]!.endsWith('*');
  if (rest ? parts.length < pattern.length : pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const isRest = rest && i === pattern.length - 1;
    const v = isRest ? parts.slice(i).join('/') : parts[i]!;
    if (p.startsWith(':')) {
      const decoded = safeDecode(v);
      if (decoded == null) return null;
      params[isRest ? p.slice(1, -1) : p.slice(1)] = decoded;
    } else if (p !== v) {
      return null;
    }
  }
  return params;
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
