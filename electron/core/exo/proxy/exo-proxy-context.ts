/**
 * What the exo proxy's routes share: the options, the proxied requests in flight (each
 * with its life and how to stop its upstream call), and the fall-through to exobar's own
 * routes for whatever is not exo's.
 */
import type { z } from 'zod';
import { ApiError } from '../../api/api-error';
import { ollamaDialectRoutes } from '../../api/dialects/dialect-routes';
import { openAiRoutes } from '../../api/openai-routes';
import { validateJson } from '../../api/read-json-body';
import { RouteTable, type RouteContext } from '../../api/route-types';
import { DEFAULT_EXO_IDLE_TIMEOUT_MS, exoModelsOf, type ExoProxyOptions } from './exo-proxy-options';
import type { ExoHold } from './exo-hold';
import type { ExoTraffic, ProxiedRequest } from './exo-traffic';
import type { ProxiedCall } from './proxied-call';

export interface ExoProxyContext {
  options: ExoProxyOptions;
  traffic: ExoTraffic;
  hold: ExoHold;
  /** exobar's own routes, for the fall-through. */
  local: RouteTable;
  /** Longest silence from exo on an open request, in ms. */
  idleMs: number;
  /** The models the attached exo serves now. */
  exoModels(): ReadonlySet<string>;
  /** Each proxied request in flight: its life, and how to stop its upstream call (client gone, cancel without a command id). */
  calls: Map<ProxiedRequest, ProxiedCall>;
  /** Hands the request to exobar's own route for the path, with the body already read. */
  delegate(ctx: RouteContext, json?: unknown): Promise<void>;
}

/** The shared part of the proxy's routes for `options`. */
export function createProxyContext(options: ExoProxyOptions): ExoProxyContext {
  const local = new RouteTable(options.localRoutes ?? [...openAiRoutes(), ...ollamaDialectRoutes()]);
  async function delegate(ctx: RouteContext, json?: unknown): Promise<void> {
    const match = local.match(ctx.req.method ?? 'GET', ctx.url.pathname);
    if ('allowed' in match) {
      if (match.allowed.length > 0)
        throw new ApiError(405, 'method_not_allowed', `${ctx.req.method} is not allowed on ${ctx.url.pathname}; use ${match.allowed.join(' or ')}`, {
          headers: { Allow: match.allowed.join(', ') },
        });
      throw new ApiError(404, 'not_found', `no endpoint ${ctx.req.method} ${ctx.url.pathname}; see docs/api.md`);
    }
    const body = json === undefined ? ctx.body : <S extends z.ZodType>(schema: S) => Promise.resolve(validateJson(json, schema));
    await match.route.handle({ ...ctx, params: match.params, body });
  }
  return {
    options,
    traffic: options.traffic,
    hold: options.hold,
    local,
    idleMs: options.idleTimeoutMs ?? DEFAULT_EXO_IDLE_TIMEOUT_MS,
    exoModels: () => options.exoModels?.() ?? exoModelsOf(options.source()),
    calls: new Map(),
    delegate,
  };
}
