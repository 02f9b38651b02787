/**
 * exobar's Ollama API (`/api/chat`, `/api/generate`, `/api/tags`, `/api/ps`) on the proxy: a
 * chat or generate for a model the attached exo serves goes to exo's own Ollama adapter under
 * `/ollama/api/…` (exo-ollama-dialect.ts), with the hold, the record (`api: "ollama-chat"` /
 * `"ollama-generate"`) and the cancel of chat completions (exo-chat-relay.ts); any other model
 * falls through to exobar's own Ollama routes. `/api/tags` and `/api/ps` list exo's models
 * beside the local ones, as `/v1/models` does. exobar's refusals are in Ollama's error shape
 * (`{"error": "…"}`); exo's own answers keep exo's.
 */
import { z } from 'zod';
import { OLLAMA_CHAT_API, OLLAMA_GENERATE_API, ollamaErrorBody } from '../../api/dialects/ollama/ollama-routes';
import { validateJson } from '../../api/read-json-body';
import type { RouteContext } from '../../api/route-types';
import { RoutableSchema } from './exo-chat-schema';
import { proxyChat } from './exo-chat-relay';
import { OLLAMA_CHAT_DIALECT, OLLAMA_GENERATE_DIALECT } from './exo-ollama-dialect';
import type { ExoProxyContext } from './exo-proxy-context';

const OptionsSchema = z
  .looseObject({ num_predict: z.number().int().nullable().optional(), temperature: z.number().finite().nullable().optional() })
  .nullable()
  .optional();

/** What exobar checks before an Ollama chat body goes to exo (`OllamaChatRequest`'s required fields); loose otherwise. */
export const ExoOllamaChatSchema = z.looseObject({
  model: z.string().min(1, 'model is required').max(300),
  messages: z.array(z.looseObject({ role: z.string().min(1).max(64), content: z.string().nullable().optional() })).max(10_000),
  stream: z.boolean().nullable().optional(),
  options: OptionsSchema,
});

/** Likewise for generate (`OllamaGenerateRequest`: only the model is required). */
export const ExoOllamaGenerateSchema = z.looseObject({
  model: z.string().min(1, 'model is required').max(300),
  prompt: z.string().optional(),
  stream: z.boolean().nullable().optional(),
  options: OptionsSchema,
});

if (OLLAMA_CHAT_DIALECT.api !== OLLAMA_CHAT_API || OLLAMA_GENERATE_DIALECT.api !== OLLAMA_GENERATE_API)
  throw new Error('the exo Ollama dialects must log as the local ones do');

/** The handler of `POST /api/chat` (`kind` chat) or `POST /api/generate`. */
export function ollamaRoute(proxy: ExoProxyContext, kind: 'chat' | 'generate'): (ctx: RouteContext) => Promise<void> {
  const dialect = kind === 'chat' ? OLLAMA_CHAT_DIALECT : OLLAMA_GENERATE_DIALECT;
  const schema = kind === 'chat' ? ExoOllamaChatSchema : ExoOllamaGenerateSchema;
  return async (ctx) => {
    ctx.useErrorBody?.(ollamaErrorBody);
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    const source = proxy.options.source();
    if (!source || !routable.success || !proxy.exoModels().has(routable.data.model)) return proxy.delegate(ctx, json);
    const body = validateJson(json, schema);
    // Ollama streams unless told not to; exo's default is the same, said outright.
    await proxyChat(proxy, ctx, { ...body, stream: body.stream !== false }, source, undefined, undefined, dialect);
  };
}

/** The handler of `GET /api/tags` (`kind` tags) or `GET /api/ps`: the local list, then exo's models. */
export function ollamaListRoute(proxy: ExoProxyContext, kind: 'tags' | 'ps'): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    let local: { models?: Array<{ name: string }> } = {};
    await proxy.delegate({ ...ctx, json: (_status, body) => (local = body as typeof local) });
    const exo = [...proxy.exoModels()].map((id) => ({
      name: id,
      model: id,
      size: 0,
      digest: '',
      details: { parent_model: '', format: 'exo', family: '', families: null, parameter_size: '', quantization_level: '' },
      ...(kind === 'tags' ? { modified_at: new Date(0).toISOString() } : { expires_at: new Date(Date.UTC(2318, 0, 1)).toISOString(), size_vram: 0 }),
    }));
    const exoIds = new Set(exo.map((m) => m.name));
    ctx.json(200, { models: [...(local.models ?? []).filter((m) => !exoIds.has(m.name)), ...exo] });
  };
}
