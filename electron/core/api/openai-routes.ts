/**
 * The OpenAI-compatible endpoints: `GET /v1/models`, `POST /v1/chat/completions`
 * (whole or streamed, through the one chat pipeline, chat/serve-chat.ts) and exo's
 * `POST /v1/cancel/{id}`, which cancels a request of any dialect by its id.
 *
 * Every request goes through the node, which is how exobar sees each request's queue
 * wait, prefill and time to first token. No token is needed here, as with exo's API:
 * the server listens on loopback and refuses other web pages (http-security.ts).
 */
import { z } from 'zod';
import { isLocal, isServing } from '../../../shared/instance-state';
import type { InstanceSnapshot, LocalInstanceSnapshot } from '../../../shared/snapshot';
import { ApiError } from './api-error';
import { explainSubmitError, keepAliveOf, serveChat } from './chat/serve-chat';
import { OPENAI_CHAT_API, openAiChatDialect } from './dialects/openai-chat/openai-chat-dialect';
import { refuseUnsupportedParameters } from './openai-parameters';
import { ChatCompletionRequestSchema, toSubmitRequest } from './openai-schemas';
import { validateJson } from './read-json-body';
import type { ApiRoute, RouteContext } from './route-types';
import type { ModelLoader } from '../on-demand/model-loader';

/** The chat pipeline's helpers the exo proxy shares, where it has always imported them. */
export { clientOf, keepAliveOf, REQUEST_ID_HEADER } from './chat/serve-chat';

/** The first instance of a model whose runner is local (its engine is known), if any. */
function local(instances: InstanceSnapshot[]): LocalInstanceSnapshot | undefined {
  return instances.find(isLocal);
}

/** Any JSON object: its parameters are checked one by one before the schema reads them. */
const JsonObjectSchema = z.record(z.string(), z.unknown());

async function chatCompletions(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  const raw = await ctx.body(JsonObjectSchema);
  const unsupported = refuseUnsupportedParameters(raw);
  if (unsupported) throw unsupported;
  const body = validateJson(raw, ChatCompletionRequestSchema);
  const request = toSubmitRequest(body, ctx.arrivedAt);
  await serveChat(ctx, loader, { ...request, api: OPENAI_CHAT_API, stream: body.stream === true, keepAliveSeconds: keepAliveOf(body.keep_alive) }, openAiChatDialect);
}

const CancelParamsSchema = z.object({ id: z.string().min(1).max(200) });

async function cancel(ctx: RouteContext): Promise<void> {
  const { id } = CancelParamsSchema.parse(ctx.params);
  if (!ctx.node.cancel(id))
    throw new ApiError(404, 'request_not_found', `no request in flight with id '${id}' (finished, cancelled or never existed)`, { param: 'id' });
  ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true });
}

/**
 * Every model a client can send requests to: the ones with an instance (`state:
 * "loaded"`, `ready` once one serves) and, with a loader, every other catalog model
 * (`state: "available"`: a request loads it).
 */
function modelList(ctx: RouteContext, loader: ModelLoader | undefined) {
  const catalog = new Map(ctx.node.models().map((m) => [m.id, m]));
  const byModel = new Map<string, InstanceSnapshot[]>();
  for (const instance of ctx.node.snapshot().instances) byModel.set(instance.model, [...(byModel.get(instance.model) ?? []), instance]);
  const loaded = [...byModel.entries()].map(([id, instances]) => ({
    id,
    object: 'model' as const,
    created: 0,
    owned_by: 'exobar',
    name: catalog.get(id)?.name ?? instances[0]!.modelName,
    engine: local(instances)?.engine ?? 'exo',
    simulated: local(instances)?.simulated ?? false,
    ready: instances.some(isServing),
    state: 'loaded' as 'loaded' | 'available',
    instance_ids: instances.map((i) => i.id),
  }));
  if (!loader?.enabled) return loaded;
  const available = [...catalog.values()]
    .filter((m) => !byModel.has(m.id))
    .map((m) => ({
      id: m.id,
      object: 'model' as const,
      created: 0,
      owned_by: 'exobar',
      name: m.name,
      engine: m.engine,
      simulated: m.simulated,
      ready: false,
      state: 'available' as const,
      instance_ids: [] as string[],
    }));
  return [...loaded, ...available];
}

/** The OpenAI routes; with a `loader`, a request for a catalog model that is not running loads it. */
export function openAiRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  const { loader } = options;
  return [
    { method: 'GET', path: '/v1/models', auth: false, handle: (ctx) => ctx.json(200, { object: 'list', data: modelList(ctx, loader) }) },
    {
      method: 'GET',
      path: '/v1/models/:model*',
      auth: false,
      handle(ctx) {
        const model = modelList(ctx, loader).find((m) => m.id === ctx.params.model);
        if (!model) throw explainSubmitError(new ApiError(404, 'model_not_found', ''), ctx.params.model ?? '', ctx.node);
        ctx.json(200, model);
      },
    },
    { method: 'POST', path: '/v1/chat/completions', auth: false, handle: (ctx) => chatCompletions(ctx, loader) },
    { method: 'POST', path: '/v1/cancel/:id', auth: false, handle: cancel },
  ];
}
