/**
 * The OpenAI-compatible endpoints: `GET /v1/models`, `POST /v1/chat/completions`
 * (whole or streamed) and exo's `POST /v1/cancel/{id}`.
 *
 * Every request goes through the node, which is how exobar sees each request's queue
 * wait, prefill and time to first token. No token is needed here, as with exo's API:
 * the server listens on loopback and refuses other web pages (http-security.ts).
 */
import { z } from 'zod';
import { isLocal, isServing } from '../../../shared/instance-state';
import type { InstanceSnapshot, LocalInstanceSnapshot } from '../../../shared/snapshot';
import type { ExobarNode, RequestEvent, RequestHandle, SubmitRequest } from '../node/node-types';
import { ApiError, errorBody, rejected, toApiError } from './api-error';
import { completionBody, contentChunk, finishChunk, generationStatsPayload, roleChunk, usageChunk } from './openai-format';
import { refuseForModel } from './openai-model-checks';
import { refuseUnsupportedParameters } from './openai-parameters';
import { ChatCompletionRequestSchema, toSubmitRequest } from './openai-schemas';
import { validateJson } from './read-json-body';
import type { ApiRoute, RouteContext } from './route-types';
import { SseStream } from './sse-stream';
import { parseKeepAlive } from '../on-demand/keep-alive';
import type { ModelLoader } from '../on-demand/model-loader';

/** The response header that carries the completion id (or, before one exists, a fresh id). */
export const REQUEST_ID_HEADER = 'x-request-id';

type TerminalEvent = Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>;

function isTerminal(event: RequestEvent): event is TerminalEvent {
  return event.type === 'finished' || event.type === 'cancelled' || event.type === 'failed';
}

/** The first instance of a model whose runner is local (its engine is known), if any. */
function local(instances: InstanceSnapshot[]): LocalInstanceSnapshot | undefined {
  return instances.find(isLocal);
}

/**
 * A submit error for the client: a model without an instance gets a 404 that says how
 * to launch it; an unknown model a 404 that says where the list is.
 */
function explainSubmitError(error: unknown, model: string, node: ExobarNode): ApiError {
  const api = toApiError(error);
  if (api.code !== 'model_not_found' && api.code !== 'instance_not_found') return api;
  const known = node.models().some((m) => m.id === model);
  const message = known
    ? `model '${model}' is not running; launch it first: POST /api/instances {"model":"${model}"} (or from the exobar window)`
    : `unknown model '${model}'; GET /v1/models lists the running models and GET /api/models the catalog`;
  return new ApiError(404, 'model_not_found', message, { param: 'model' });
}

interface Submitted {
  handle: RequestHandle;
  /** Routes the request's events; events that arrive before it is set are buffered. */
  setSink(sink: (event: RequestEvent) => void): void;
}

/**
 * Submits to the node and waits one turn of the event loop, so a refusal the node
 * reports at once (as a throw or as a `failed` event) becomes a proper HTTP status
 * instead of an error inside an already-started stream.
 *
 * From here on, a client that goes away before the request ended cancels it ("a client
 * that disconnects cancels its request"); the node holds the cancel until the runner
 * has acknowledged the task, so it is never lost.
 */
async function submit(ctx: RouteContext, request: SubmitRequest): Promise<Submitted> {
  const buffered: RequestEvent[] = [];
  let sink: ((event: RequestEvent) => void) | null = null;
  let ended = false;
  let handle: RequestHandle;
  try {
    handle = ctx.node.submit(request, (event) => {
      if (isTerminal(event)) ended = true;
      if (sink) sink(event);
      else buffered.push(event);
    });
  } catch (error) {
    throw explainSubmitError(error, request.model, ctx.node);
  }
  // From here every answer, success or error, carries the completion id.
  ctx.res.setHeader(REQUEST_ID_HEADER, handle.id);
  ctx.res.on('close', () => {
    if (!ended && !ctx.res.writableFinished) ctx.node.cancel(handle.id, 'client_disconnect');
  });
  await new Promise((resolve) => setImmediate(resolve));
  const failed = buffered.find((e): e is Extract<TerminalEvent, { type: 'failed' }> => e.type === 'failed');
  if (failed && !buffered.some((e) => e.type === 'token')) throw explainSubmitError(failed.error, request.model, ctx.node);
  return {
    handle,
    setSink(next) {
      sink = next;
      for (const event of buffered.splice(0)) next(event);
    },
  };
}

/** Any JSON object: its parameters are checked one by one before the schema reads them. */
const JsonObjectSchema = z.record(z.string(), z.unknown());

/**
 * A request's `keep_alive` in seconds (null: for good); undefined when it sent none. The
 * local chat route and the exo proxy's both read it here.
 */
export function keepAliveOf(value: unknown): number | null | undefined {
  if (value == null) return undefined;
  try {
    if (typeof value !== 'number' && typeof value !== 'string') throw new Error('keep_alive is seconds, a duration ("5m"), or -1 for never');
    return parseKeepAlive(value);
  } catch (error) {
    throw rejected(400, 'invalid_keep_alive', (error as Error).message, 'keep_alive');
  }
}

/**
 * Loads the model on request when it is not running (models on demand). A refusal is the
 * request's answer, in words; `x-should-retry: false` keeps OpenAI clients from sending
 * it again at once (they retry 409 and 5xx): it would be refused again until something changes.
 */
async function loadOnRequest(loader: ModelLoader, model: string, keepAliveSeconds: number | null | undefined): Promise<void> {
  try {
    await loader.prepare(model, keepAliveSeconds === undefined ? {} : { keepAliveSeconds });
  } catch (error) {
    const api = toApiError(error);
    throw new ApiError(api.status, api.code, api.message, { ...api.options, headers: { ...api.options.headers, 'x-should-retry': 'false' } });
  }
}

/** The client's User-Agent for the request log, bounded (a header can be long). */
export function clientOf(ctx: Pick<RouteContext, 'req'>): string | null {
  const agent = ctx.req.headers['user-agent'];
  return typeof agent === 'string' && agent !== '' ? agent.slice(0, 200) : null;
}

async function chatCompletions(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  const raw = await ctx.body(JsonObjectSchema);
  const unsupported = refuseUnsupportedParameters(raw);
  if (unsupported) throw unsupported;
  const body = validateJson(raw, ChatCompletionRequestSchema);
  const request = toSubmitRequest(body, ctx.arrivedAt);
  ctx.logFields.model = request.model;
  const modelRefusal = refuseForModel(
    request,
    ctx.node.models().find((m) => m.id === request.model),
  );
  if (modelRefusal) throw modelRefusal;
  const keepAliveSeconds = keepAliveOf(body.keep_alive);
  if (loader) await loadOnRequest(loader, request.model, keepAliveSeconds);
  const submitRequest = { ...request, client: clientOf(ctx) };
  let submitted: Submitted;
  try {
    submitted = await submit(ctx, submitRequest);
  } catch (error) {
    // Its idle instance unloaded between the load check and the submit: load it again, once.
    if (!loader || !(error instanceof ApiError) || error.code !== 'model_not_found' || !ctx.node.models().some((m) => m.id === request.model)) throw error;
    await loadOnRequest(loader, request.model, keepAliveSeconds);
    submitted = await submit(ctx, submitRequest);
  }
  if (body.stream) streamCompletion(ctx, submitted);
  else await wholeCompletion(ctx, submitted);
}

/** Non-streaming: one `chat.completion` once the request ends. */
async function wholeCompletion(ctx: RouteContext, submitted: Submitted): Promise<void> {
  const { handle } = submitted;
  const parts: string[] = [];
  let terminal: TerminalEvent | null = null;
  const ended = new Promise<TerminalEvent>((resolve) => {
    submitted.setSink((event) => {
      if (event.type === 'token') parts.push(event.text);
      else if (isTerminal(event) && terminal == null) {
        terminal = event;
        resolve(event);
      }
    });
  });
  const event = await Promise.race([ended, handle.done]);
  if (ctx.res.destroyed) return;
  if (event.type === 'failed') throw toApiError(event.error);
  // A cancelled request answers 200 with what was generated and finish_reason "cancelled":
  // an error status would make OpenAI clients raise (and retry 5xx) for something the
  // user asked for.
  const finishReason = event.type === 'cancelled' ? 'cancelled' : event.finishReason;
  ctx.json(200, completionBody(handle, parts.join(''), finishReason, event.usage));
}

/**
 * Streaming: a first chunk with the role and the completion id as soon as the stream
 * opens (so a client can cancel a long prefill by that id), then `data:` chunks in
 * OpenAI's `chat.completion.chunk` shape, exo's
 * `: prefill_progress {...}` comments while the prompt is prefilled, then a finish
 * chunk, a usage chunk, exo's `: generation_stats {...}` comment and `data: [DONE]`.
 * A failure after the stream started is sent as `data: {"error": {...}}` (OpenAI
 * clients raise it) and the stream ends without [DONE].
 */
function streamCompletion(ctx: RouteContext, submitted: Submitted): void {
  const { handle } = submitted;
  const sse = new SseStream(ctx.res);
  sse.open();
  sse.data(roleChunk(handle));
  let done = false;
  const finish = (event: TerminalEvent | ApiError): void => {
    if (done) return;
    done = true;
    if (event instanceof ApiError || event.type === 'failed') {
      sse.data(errorBody(event instanceof ApiError ? event : toApiError(event.error)));
      sse.end();
      return;
    }
    const reason = event.type === 'cancelled' ? 'cancelled' : event.finishReason;
    sse.data(finishChunk(handle, reason));
    sse.data(usageChunk(handle, event.usage));
    if (event.type === 'finished' && event.stats) sse.comment(`generation_stats ${JSON.stringify(generationStatsPayload(event.stats))}`);
    sse.data('[DONE]');
    sse.end();
  };
  submitted.setSink((event) => {
    if (done) return;
    switch (event.type) {
      case 'token':
        // A token whose text the runner holds back (it may start a stop sequence) has none yet.
        if (event.text !== '') sse.data(contentChunk(handle, event.text));
        break;
      case 'prefill_progress':
        sse.comment(`prefill_progress ${JSON.stringify({ processed_tokens: event.processedTokens, total_tokens: event.totalTokens })}`);
        break;
      case 'acknowledged':
        break;
      default:
        finish(event);
    }
  });
  // The node promises exactly one terminal event; `done` is the same outcome and a
  // safety net so a stream can never be left open.
  void handle.done.then(finish, (error: unknown) => finish(toApiError(error)));
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
