/**
 * Any other `/v1/…` path on the proxy: exobar's own route if it has one, else exo's,
 * passed through (status, headers and body as exo sends them). Only well-formed JSON
 * bodies go on to exo.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ApiError } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import type { ExoProxyContext } from './exo-proxy-context';
import { callExo, passHeaders } from './exo-upstream';

/** The handler of every other `/v1/` path. */
export function passThroughRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    const source = proxy.options.source();
    const method = ctx.req.method ?? 'GET';
    const match = proxy.local.match(method, ctx.url.pathname);
    if (!source || !('allowed' in match) || match.allowed.length > 0) return proxy.delegate(ctx);
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'DELETE';
    // Only well-formed JSON goes on: a body exobar cannot parse is refused here.
    const json = hasBody ? await ctx.body(z.unknown()) : undefined;
    const call = callExo(source.url, method, `${ctx.url.pathname}${ctx.url.search}`, json === undefined ? undefined : JSON.stringify(json));
    ctx.res.on('close', () => !ctx.res.writableFinished && call.req.destroy());
    let res: IncomingMessage;
    try {
      res = await call.response;
    } catch (error) {
      throw new ApiError(502, 'exo_unreachable', `the exo node at ${source.url} could not be reached (${(error as Error).message})`);
    }
    ctx.res.writeHead(res.statusCode ?? 502, passHeaders(res));
    ctx.res.flushHeaders();
    res.pipe(ctx.res);
  };
}
