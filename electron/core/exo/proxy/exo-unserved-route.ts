/**
 * A dialect exobar serves for local models and exo 0.3.70 does not (legacy
 * `POST /v1/completions`, `POST /v1/messages/count_tokens`): for an exo model it answers
 * 404 naming what exo does serve (src/exo/api/main.py `_setup_routes`), rather than
 * passing it to exo for FastAPI's bare `{"detail":"Not Found"}`; any other model falls
 * through to exobar's own route.
 */
import { z } from 'zod';
import { ApiError } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import { RoutableSchema } from './exo-chat-schema';
import type { ExoProxyContext } from './exo-proxy-context';

/** The generation endpoints exo 0.3.70 serves, as exobar proxies them. */
export const EXO_SERVED_DIALECTS = 'POST /v1/chat/completions, POST /v1/messages and POST /v1/responses';

/** The paths exobar serves locally that exo does not. */
export const EXO_UNSERVED_PATHS = ['/v1/completions', '/v1/messages/count_tokens'] as const;

/** The handler of a path in {@link EXO_UNSERVED_PATHS}; `shape`: the dialect's error body, when not OpenAI's. */
export function unservedRoute(proxy: ExoProxyContext, shape?: (error: ApiError) => unknown): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    if (shape) ctx.useErrorBody?.(shape);
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    if (!proxy.options.source() || !routable.success || !proxy.exoModels().has(routable.data.model)) return proxy.delegate(ctx, json);
    throw new ApiError(
      404,
      'not_served_by_exo',
      `${routable.data.model} is served by exo, and exo does not serve ${ctx.req.method} ${ctx.url.pathname}; exo serves ${EXO_SERVED_DIALECTS}`,
      { param: 'model' },
    );
  };
}
