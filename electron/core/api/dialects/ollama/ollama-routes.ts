/**
 * Ollama's API for local models, at Ollama's own paths and without a token, as Ollama
 * serves it: `POST /api/chat` and `POST /api/generate` (NDJSON streams unless
 * `stream: false`) through the one chat pipeline (chat/serve-chat.ts), `GET /api/tags`
 * (the catalog), `GET /api/ps` (what is loaded, with its `expires_at` from the
 * residency), `POST /api/show`, `GET /api/version`. `keep_alive` sets the model's
 * residency (on-demand loading); `/api/generate` with no prompt loads the model, and
 * with `keep_alive: 0` unloads it, as Ollama does. Errors are Ollama's `{"error": "..."}`.
 *
 * These paths share /api with exobar's control API: the server lists them after the
 * control routes (dialect-routes.ts), and a test checks that no path is both.
 */
import { performance } from 'node:perf_hooks';
import type { ServerResponse } from 'node:http';
import {
  OllamaChatRequestSchema,
  OllamaGenerateRequestSchema,
  OllamaShowRequestSchema,
  type OllamaChatRequest,
  type OllamaGenerateRequest,
} from '../../../../../shared/dialect-ollama';
import { localInstances } from '../../../../../shared/instance-state';
import type { CatalogModel } from '../../../../../shared/catalog';
import type { ChatMessage, ToolCall } from '../../../../../shared/runner-protocol';
import type { SubmitRequest } from '../../../node/node-types';
import type { ModelLoader } from '../../../on-demand/model-loader';
import type { ApiError } from '../../api-error';
import { explainSubmitError, keepAliveOf, loadOnRequest, serveChat, type ChatAnswer, type ChatEnd, type Dialect } from '../../chat/serve-chat';
import type { ApiRoute, RouteContext } from '../../route-types';

export const OLLAMA_CHAT_API = 'ollama-chat';
export const OLLAMA_GENERATE_API = 'ollama-generate';
/** The Ollama API version exobar answers like (the fields above are Ollama 0.12's). */
export const OLLAMA_COMPATIBLE_VERSION = '0.12.0';

export const ollamaErrorBody = (error: ApiError) => ({ error: error.message });

const ns = (ms: number) => Math.max(0, Math.round(ms * 1e6));

function toolCallsOf(calls: readonly ToolCall[]) {
  return calls.map((c) => {
    let args: unknown = {};
    try {
      args = JSON.parse(c.arguments);
    } catch {
      args = { arguments: c.arguments };
    }
    return { function: { name: c.name, arguments: args } };
  });
}

/** Ollama's closing figures, durations in nanoseconds, from the node's own measurements. */
function closing(ctx: RouteContext, end: ChatEnd) {
  const s = end.stats;
  return {
    done: true,
    done_reason: end.finishReason === 'length' ? 'length' : end.finishReason === 'cancelled' ? 'cancelled' : 'stop',
    total_duration: ns(performance.now() - ctx.arrivedAt),
    load_duration: 0,
    // The whole prompt, as Ollama counts it; the part its prompt cache served apart, as Ollama's `prompt_eval_cached_count` (left out when the runner did not say).
    prompt_eval_count: end.usage.promptTokens,
    ...(end.usage.cachedTokens !== undefined ? { prompt_eval_cached_count: end.usage.cachedTokens } : {}),
    prompt_eval_duration: s && s.promptTps > 0 ? ns((s.promptTokens / s.promptTps) * 1000) : 0,
    eval_count: end.usage.completionTokens,
    eval_duration: s && s.generationTps > 0 ? ns((s.generationTokens / s.generationTps) * 1000) : 0,
  };
}

/** An NDJSON stream: one JSON object per line. */
function ndjson(res: ServerResponse) {
  return {
    open() {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
      res.flushHeaders();
    },
    line(value: unknown) {
      if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify(value)}\n`);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}

function ollamaDialect(api: string, shape: 'chat' | 'generate'): Dialect {
  const created = () => new Date().toISOString();
  const body = (text: string, calls: readonly ToolCall[]) =>
    shape === 'chat'
      ? { message: { role: 'assistant', content: text, ...(calls.length > 0 ? { tool_calls: toolCallsOf(calls) } : {}) } }
      : { response: text };
  return {
    api,
    whole(ctx, handle, answer: ChatAnswer) {
      ctx.json(200, { model: handle.model, created_at: created(), ...body(answer.text, answer.toolCalls), ...closing(ctx, answer) });
    },
    stream(ctx, handle) {
      const out = ndjson(ctx.res);
      return {
        open: () => out.open(),
        text: (text) => out.line({ model: handle.model, created_at: created(), ...body(text, []), done: false }),
        toolCalls: (calls) => out.line({ model: handle.model, created_at: created(), ...body('', calls), done: false }),
        // Ollama's stream has no progress lines; the node still measures the prefill.
        progress: () => undefined,
        end(end) {
          out.line({ model: handle.model, created_at: created(), ...body('', []), ...closing(ctx, end) });
          out.end();
        },
        fail(error) {
          out.line(ollamaErrorBody(error));
          out.end();
        },
      };
    },
  };
}

type Options = NonNullable<OllamaChatRequest['options']>;

/** Ollama's options as the node's sampling; `num_predict` of -1 (or less) lets the model stop on its own. */
function optionsOf(options: Options | null | undefined): Pick<SubmitRequest, 'maxTokens' | 'temperature' | 'seed' | 'stop' | 'topP' | 'topK' | 'minP' | 'repetitionPenalty' | 'presencePenalty' | 'frequencyPenalty'> {
  const o = options ?? {};
  return {
    maxTokens: o.num_predict != null && o.num_predict > 0 ? o.num_predict : null,
    temperature: o.temperature ?? null,
    seed: o.seed ?? null,
    stop: o.stop ?? [],
    ...(o.top_p != null ? { topP: o.top_p } : {}),
    ...(o.top_k != null ? { topK: o.top_k } : {}),
    ...(o.min_p != null ? { minP: o.min_p } : {}),
    ...(o.repeat_penalty != null ? { repetitionPenalty: o.repeat_penalty } : {}),
    ...(o.presence_penalty != null ? { presencePenalty: o.presence_penalty } : {}),
    ...(o.frequency_penalty != null ? { frequencyPenalty: o.frequency_penalty } : {}),
  };
}

/** Ollama's `format`: "json" for any JSON object, or a JSON schema. */
function formatOf(format: OllamaChatRequest['format']): Pick<SubmitRequest, 'responseFormat'> {
  if (format == null || format === '') return {};
  if (format === 'json') return { responseFormat: { type: 'json_object' } };
  return { responseFormat: { type: 'json_schema', schema: format } };
}

function chatMessages(body: OllamaChatRequest): ChatMessage[] {
  return body.messages.map((m, i) => {
    const message: ChatMessage = { role: m.role, content: m.content };
    if (m.tool_calls && m.tool_calls.length > 0) {
      message.toolCalls = m.tool_calls.map((c, j) => ({ id: `call_${i}_${j}`, name: c.function.name, arguments: JSON.stringify(c.function.arguments ?? {}) }));
    }
    return message;
  });
}

async function chat(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  ctx.useErrorBody?.(ollamaErrorBody);
  const body = await ctx.body(OllamaChatRequestSchema);
  const keepAliveSeconds = keepAliveOf(body.keep_alive);
  // Ollama: a chat with no messages loads (or, keep_alive 0, unloads) the model.
  if (body.messages.length === 0) return residencyOnly(ctx, loader, body.model, keepAliveSeconds, 'chat');
  const tools = (body.tools ?? []).map((t) => ({ name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), ...(t.function.parameters ? { parameters: t.function.parameters } : {}) }));
  await serveChat(
    ctx,
    loader,
    {
      api: OLLAMA_CHAT_API,
      model: body.model,
      messages: chatMessages(body),
      ...optionsOf(body.options),
      ...formatOf(body.format),
      ...(tools.length > 0 ? { tools, toolChoice: 'auto' as const } : {}),
      stream: body.stream !== false,
      keepAliveSeconds,
      arrivedAt: ctx.arrivedAt,
    },
    ollamaDialect(OLLAMA_CHAT_API, 'chat'),
  );
}

async function generate(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  ctx.useErrorBody?.(ollamaErrorBody);
  const body: OllamaGenerateRequest = await ctx.body(OllamaGenerateRequestSchema);
  const keepAliveSeconds = keepAliveOf(body.keep_alive);
  if (!body.prompt) return residencyOnly(ctx, loader, body.model, keepAliveSeconds, 'generate');
  const messages: ChatMessage[] = [...(body.system ? [{ role: 'system' as const, content: body.system }] : []), { role: 'user', content: body.prompt }];
  await serveChat(
    ctx,
    loader,
    {
      api: OLLAMA_GENERATE_API,
      model: body.model,
      messages,
      ...optionsOf(body.options),
      ...formatOf(body.format),
      stream: body.stream !== false,
      keepAliveSeconds,
      arrivedAt: ctx.arrivedAt,
    },
    ollamaDialect(OLLAMA_GENERATE_API, 'generate'),
  );
}

/**
 * Ollama's load and unload requests (no prompt, or no messages): loads the model on
 * request with its `keep_alive`; `keep_alive: 0` unloads it at once instead (the
 * operator's unload, refused while it has requests).
 */
async function residencyOnly(ctx: RouteContext, loader: ModelLoader | undefined, model: string, keepAliveSeconds: number | null | undefined, shape: 'chat' | 'generate'): Promise<void> {
  const empty = shape === 'chat' ? { message: { role: 'assistant', content: '' } } : { response: '' };
  if (keepAliveSeconds === 0) {
    for (const instance of localInstances(ctx.node.snapshot()).filter((i) => i.model === model)) await ctx.node.unloadInstance(instance.id, 'operator');
    ctx.json(200, { model, created_at: new Date().toISOString(), ...empty, done: true, done_reason: 'unload' });
    return;
  }
  if (loader) await loadOnRequest(loader, model, keepAliveSeconds);
  if (!localInstances(ctx.node.snapshot()).some((i) => i.model === model)) throw explainSubmitError(new Error('not running'), model, ctx.node);
  ctx.json(200, { model, created_at: new Date().toISOString(), ...empty, done: true, done_reason: 'load' });
}

function details(model: CatalogModel) {
  return { parent_model: '', format: model.engine === 'mlx' ? 'mlx' : 'sim', family: '', families: null, parameter_size: '', quantization_level: '' };
}

function tags(ctx: RouteContext): void {
  ctx.json(200, {
    models: ctx.node.models().map((m) => ({ name: m.id, model: m.id, modified_at: new Date(0).toISOString(), size: m.memoryBytes, digest: '', details: details(m) })),
  });
}

function ps(ctx: RouteContext): void {
  const catalog = new Map(ctx.node.models().map((m) => [m.id, m]));
  const models = localInstances(ctx.node.snapshot()).map((i) => {
    const model = catalog.get(i.model);
    // Ollama's "never" is far in the future; exobar's residency says when it unloads if idle.
    const expires = i.residency.unloadsAt ?? (i.residency.ttlSeconds === null || i.residency.pinned ? Date.UTC(2318, 0, 1) : Date.now() + i.residency.ttlSeconds * 1000);
    return {
      name: i.model,
      model: i.model,
      size: i.residency.memoryBytes,
      digest: '',
      details: model ? details(model) : null,
      expires_at: new Date(expires).toISOString(),
      size_vram: i.residency.memoryBytes,
    };
  });
  ctx.json(200, { models });
}

async function show(ctx: RouteContext): Promise<void> {
  ctx.useErrorBody?.(ollamaErrorBody);
  const body = await ctx.body(OllamaShowRequestSchema);
  const id = (body.model ?? body.name)!;
  const model = ctx.node.models().find((m) => m.id === id);
  if (!model) throw explainSubmitError(new Error('unknown'), id, ctx.node);
  ctx.json(200, {
    modelfile: '',
    parameters: '',
    template: '',
    details: details(model),
    model_info: { 'general.architecture': model.engine, ...(model.contextLength ? { 'general.context_length': model.contextLength } : {}) },
    // The sim answers tools and JSON schemas; an MLX model's tool support is known from its runner once loaded.
    capabilities: model.engine === 'sim' ? ['completion', 'tools'] : ['completion'],
    modified_at: new Date(0).toISOString(),
  });
}

export function ollamaRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return [
    { method: 'POST', path: '/api/chat', auth: false, handle: (ctx) => chat(ctx, options.loader) },
    { method: 'POST', path: '/api/generate', auth: false, handle: (ctx) => generate(ctx, options.loader) },
    { method: 'GET', path: '/api/tags', auth: false, handle: tags },
    { method: 'GET', path: '/api/ps', auth: false, handle: ps },
    { method: 'POST', path: '/api/show', auth: false, handle: show },
    { method: 'GET', path: '/api/version', auth: false, handle: (ctx) => ctx.json(200, { version: OLLAMA_COMPATIBLE_VERSION }) },
  ];
}
