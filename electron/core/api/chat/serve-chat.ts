/**
 * The one chat pipeline every API dialect runs through (OpenAI chat and completions,
 * Responses, Anthropic Messages, Ollama): the node's one chat request in, the node's
 * events out to the dialect's own writer. Everything that must be the same whatever
 * the client speaks lives here, once: the model checks (what the engine cannot do, the
 * context window), loading on request with `keep_alive`, the submit (so the node
 * measures TTFT and its parts, prefill progress and tokens/s, and logs the request with
 * its `api`), the cancel when the client goes away, and the errors (a dialect only
 * chooses their shape).
 */
import type { GenerationStats, ToolCall, Usage } from '../../../../shared/runner-protocol';
import type { ExobarNode, RequestEvent, RequestHandle, SubmitRequest } from '../../node/node-types';
import { parseKeepAlive } from '../../on-demand/keep-alive';
import type { ModelLoader } from '../../on-demand/model-loader';
import { ApiError, rejected, toApiError } from '../api-error';
import { refuseForModel } from '../openai-model-checks';
import type { RouteContext } from '../route-types';

/** The response header that carries the completion id (or, before one exists, a fresh id). */
export const REQUEST_ID_HEADER = 'x-request-id';

/** The node's chat request as every dialect builds it, with what the pipeline itself needs. */
export interface ChatRequest extends SubmitRequest {
  /** The dialect's name: the request log's and the metrics' `api`. */
  api: string;
  stream: boolean;
  /** Seconds the model stays loaded after this request (null: for good); undefined: not said. */
  keepAliveSeconds?: number | null;
}

/** How a request ended, as every dialect reports it. */
export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'cancelled';

export interface ChatEnd {
  finishReason: ChatFinishReason;
  usage: Usage;
  stats: GenerationStats | null;
  /** With finish `stop`: the request's stop sequence that ended it; null when none did (or the runner did not say). */
  stopSequence: string | null;
}

/** A whole (not streamed) answer. */
export interface ChatAnswer extends ChatEnd {
  text: string;
  toolCalls: ToolCall[];
}

/** One streamed answer in a dialect's wire format; the pipeline calls these in order. */
export interface ChatStreamWriter {
  /** Status and headers, and whatever the dialect sends first (role chunk, message_start). */
  open(): void;
  text(text: string): void;
  toolCalls(calls: ToolCall[]): void;
  progress(processedTokens: number, totalTokens: number): void;
  /** The end: finish, usage, closing events; then the response ends. */
  end(end: ChatEnd): void;
  /** A failure after the stream opened, in the dialect's stream-error shape; then the response ends. */
  fail(error: ApiError): void;
}

export interface Dialect {
  /** The `api` of the request log and the metrics. */
  api: string;
  whole(ctx: RouteContext, handle: RequestHandle, answer: ChatAnswer): void;
  stream(ctx: RouteContext, handle: RequestHandle): ChatStreamWriter;
}

type TerminalEvent = Extract<RequestEvent, { type: 'finished' | 'cancelled' | 'failed' }>;

function isTerminal(event: RequestEvent): event is TerminalEvent {
  return event.type === 'finished' || event.type === 'cancelled' || event.type === 'failed';
}

/**
 * A submit error for the client: a model without an instance gets a 404 that says how
 * to launch it; an unknown model a 404 that says where the list is.
 */
export function explainSubmitError(error: unknown, model: string, node: ExobarNode): ApiError {
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

/**
 * A request's `keep_alive` in seconds (null: for good); undefined when it sent none. The
 * local chat routes and the exo proxy's all read it here.
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
export async function loadOnRequest(loader: ModelLoader, model: string, keepAliveSeconds: number | null | undefined): Promise<void> {
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

/** The checks and gates before a chat request may be submitted; throws the refusal. */
export async function admitChat(ctx: RouteContext, loader: ModelLoader | undefined, request: ChatRequest): Promise<void> {
  ctx.logFields.model = request.model;
  ctx.logFields.api = request.api;
  const choice = request.toolChoice;
  if (choice && typeof choice === 'object' && !(request.tools ?? []).some((t) => t.name === choice.name)) {
    throw rejected(400, 'invalid_tool_choice', `tool_choice names '${choice.name}', which is not among the request's tools`, 'tool_choice');
  }
  if (choice === 'required' && (request.tools ?? []).length === 0) {
    throw rejected(400, 'invalid_tool_choice', 'tool_choice "required" needs at least one tool in tools', 'tool_choice');
  }
  const modelRefusal = refuseForModel(
    request,
    ctx.node.models().find((m) => m.id === request.model),
  );
  if (modelRefusal) throw modelRefusal;
  if (loader) await loadOnRequest(loader, request.model, request.keepAliveSeconds);
}

/** Serves one chat request in `dialect`: gates, submit, then the whole answer or its stream. */
export async function serveChat(ctx: RouteContext, loader: ModelLoader | undefined, request: ChatRequest, dialect: Dialect): Promise<void> {
  await admitChat(ctx, loader, request);
  const submitRequest: SubmitRequest = { ...request, client: clientOf(ctx) };
  let submitted: Submitted;
  try {
    submitted = await submit(ctx, submitRequest);
  } catch (error) {
    // Its idle instance unloaded between the load check and the submit: load it again, once.
    if (!loader || !(error instanceof ApiError) || error.code !== 'model_not_found' || !ctx.node.models().some((m) => m.id === request.model)) throw error;
    await loadOnRequest(loader, request.model, request.keepAliveSeconds);
    submitted = await submit(ctx, submitRequest);
  }
  if (request.stream) streamAnswer(submitted, dialect.stream(ctx, submitted.handle));
  else await wholeAnswer(ctx, submitted, dialect);
}

/** How a request that did not fail ended, as every dialect reports it. */
function chatEnd(event: Extract<TerminalEvent, { type: 'finished' | 'cancelled' }>): ChatEnd {
  if (event.type === 'cancelled') return { finishReason: 'cancelled', usage: event.usage, stats: null, stopSequence: null };
  return { finishReason: event.finishReason, usage: event.usage, stats: event.stats, stopSequence: event.stopSequence ?? null };
}

/** Non-streaming: the dialect's one body once the request ends. */
async function wholeAnswer(ctx: RouteContext, submitted: Submitted, dialect: Dialect): Promise<void> {
  const { handle } = submitted;
  const parts: string[] = [];
  const toolCalls: ToolCall[] = [];
  let terminal: TerminalEvent | null = null;
  const ended = new Promise<TerminalEvent>((resolve) => {
    submitted.setSink((event) => {
      if (event.type === 'token') parts.push(event.text);
      else if (event.type === 'tool_calls') toolCalls.push(...event.toolCalls);
      else if (isTerminal(event) && terminal == null) {
        terminal = event;
        resolve(event);
      }
    });
  });
  const event = await Promise.race([ended, handle.done]);
  if (ctx.res.destroyed) return;
  if (event.type === 'failed') throw toApiError(event.error);
  // A cancelled request answers 200 with what was generated and a "cancelled" finish: an
  // error status would make clients raise (and retry 5xx) for something the user asked for.
  dialect.whole(ctx, handle, { text: parts.join(''), toolCalls, ...chatEnd(event) });
}

/** Streaming: the writer opens at once (its id lets a client cancel a long prefill), then every event in order. */
function streamAnswer(submitted: Submitted, writer: ChatStreamWriter): void {
  const { handle } = submitted;
  writer.open();
  let done = false;
  const finish = (event: TerminalEvent | ApiError): void => {
    if (done) return;
    done = true;
    if (event instanceof ApiError || event.type === 'failed') {
      writer.fail(event instanceof ApiError ? event : toApiError(event.error));
      return;
    }
    writer.end(chatEnd(event));
  };
  submitted.setSink((event) => {
    if (done) return;
    switch (event.type) {
      case 'token':
        // A token whose text the runner holds back (it may start a stop sequence) has none yet.
        if (event.text !== '') writer.text(event.text);
        break;
      case 'tool_calls':
        writer.toolCalls(event.toolCalls);
        break;
      case 'prefill_progress':
        writer.progress(event.processedTokens, event.totalTokens);
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
