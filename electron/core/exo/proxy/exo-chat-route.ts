/**
 * `POST /v1/chat/completions` on the proxy: decides where a chat request goes. A model
 * the attached exo serves is proxied to exo ({@link proxyChat}); a model exo has
 * downloaded but not placed is refused with how to place it, or placed first with
 * `exo.placeOnDemand` on; one whose every instance has lost its runner is answered 503
 * at once (exo would leave it hanging); anything else falls through to exobar's own route.
 */
import { z } from 'zod';
import { localInstances } from '../../../../shared/instance-state';
import { ApiError, toApiError } from '../../api/api-error';
import { clientOf, keepAliveOf } from '../../api/openai-routes';
import { validateJson } from '../../api/read-json-body';
import type { RouteContext } from '../../api/route-types';
import { ExoChatRequestSchema, RoutableSchema, type ExoChatRequest } from './exo-chat-schema';
import { epochOf, proxyChat } from './exo-chat-relay';
import { refuseDownloadedNotPlaced } from './exo-not-placed';
import type { ExoPlacer } from './exo-proxy-options';
import type { ExoProxyContext } from './exo-proxy-context';
import type { ExoStateSource } from './exo-traffic';
import { openProxiedCall } from './proxied-call';

/** The handler of `POST /v1/chat/completions`. */
export function chatRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  const { options } = proxy;
  return async (ctx) => {
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    const source = options.source();
    if (!source || !routable.success) return proxy.delegate(ctx, json);
    const model = routable.data.model;
    if (!proxy.exoModels().has(model)) {
      // Downloaded on exo, not placed: say so instead of loading it locally or "unknown model" (a local instance of it still serves).
      const notPlaced = localInstances(ctx.node.snapshot()).some((i) => i.model === model) ? null : refuseDownloadedNotPlaced(source, model, proxy.exoModels());
      if (!notPlaced) return proxy.delegate(ctx, json);
      if (options.placeOnDemand?.() !== true || !options.placer) throw notPlaced;
      const body = validateJson(json, ExoChatRequestSchema);
      return placeThenProxy(proxy, ctx, body, source, options.placer);
    }
    const body = validateJson(json, ExoChatRequestSchema);
    const unservable = options.unservable?.(model) ?? null;
    // Not retried by OpenAI clients: exo keeps the instance until someone deletes it.
    if (unservable) throw new ApiError(503, 'exo_instance_without_runner', unservable, { param: 'model', headers: { 'x-should-retry': 'false' } });
    await proxyChat(proxy, ctx, body, source);
  };
}

/**
 * `exo.placeOnDemand` on: the request waits as "loading" while exobar places its model
 * on exo, then goes on as any proxied request, its TTFT with the `load` part. A refusal
 * is its answer, in words, not retried by OpenAI clients (`x-should-retry: false`).
 */
async function placeThenProxy(proxy: ExoProxyContext, ctx: RouteContext, body: ExoChatRequest, source: ExoStateSource, placer: ExoPlacer): Promise<void> {
  const { traffic, calls } = proxy;
  const keepAlive = keepAliveOf((body as { keep_alive?: unknown }).keep_alive);
  const record = traffic.begin(body.model, source.url, body.stream === true, epochOf(ctx.arrivedAt), clientOf(ctx));
  const call = openProxiedCall(calls, traffic, ctx.log, record, 'loading');
  const gone = () => {
    if (call.life.state === 'loading') call.life.cancel('client_disconnect', 'the client went away while exobar placed the model on exo');
  };
  ctx.res.once('close', gone);
  try {
    await placer.place(body.model, keepAlive);
  } catch (error) {
    const api = toApiError(error);
    call.life.fail({ code: api.code, message: api.message });
    calls.delete(record);
    throw new ApiError(api.status, api.code, api.message, { ...api.options, headers: { ...api.options.headers, 'x-should-retry': 'false' } });
  } finally {
    ctx.res.off('close', gone);
  }
  if (call.life.ended || ctx.res.destroyed) {
    calls.delete(record);
    return;
  }
  traffic.loaded(record);
  call.life.to('waiting', 'placed on exo');
  // keep_alive is exobar's (Ollama's) field, taken above: exo's API does not know it.
  const { keep_alive: _taken, ...forward } = body as ExoChatRequest & { keep_alive?: unknown };
  try {
    await proxyChat(proxy, ctx, forward as ExoChatRequest, source, record, call);
  } finally {
    placer.use(body.model);
  }
}
