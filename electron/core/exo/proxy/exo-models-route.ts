/**
 * `GET /v1/models` on the proxy: exobar's own models and the attached exo's (by exo's
 * model ids); a model both have is listed once, as exo's.
 */
import type { RouteContext } from '../../api/route-types';
import type { ExoProxyContext } from './exo-proxy-context';

/** The handler of `GET /v1/models`. */
export function modelsRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    let localBody: { data?: Array<{ id: string }> } = {};
    await proxy.delegate({ ...ctx, json: (_status, body) => (localBody = body as typeof localBody) });
    const exo = [...proxy.exoModels()].map((id) => ({
      id,
      object: 'model' as const,
      created: 0,
      owned_by: 'exo',
      name: id.split('/').pop() ?? id,
      engine: 'exo',
      simulated: false,
      ready: true,
      exo_url: proxy.options.source()?.url ?? null,
    }));
    const exoIds = new Set(exo.map((m) => m.id));
    ctx.json(200, { object: 'list', data: [...(localBody.data ?? []).filter((m) => !exoIds.has(m.id)), ...exo] });
  };
}
