/**
 * The transparent proxy to an attached exo, as a route layer registered before the
 * OpenAI routes (the API server's `extraRoutes`): a request for a model the attached
 * exo serves goes to that exo node; anything else falls through to exobar's own
 * OpenAI routes, unchanged.
 *
 * - `POST /v1/chat/completions`: streams pass through byte for byte as they arrive
 *   (exo's comments included); exo's errors keep their status and shape; a whole
 *   answer is exo's body. Each request is recorded ({@link ExoTraffic}) and, with the
 *   hold on, waits in exobar's queue while its model prefills another stream.
 * - `GET /v1/models`: exobar's own models and the exo models (exo's model ids).
 * - `POST /v1/cancel/{id}`: an exo request's cancel goes to the exo node that received
 *   it (exo cancels only there); the answer says whether exo took it.
 * - any other `/v1/…` exo has: passed through.
 *
 * Faults (exo 404/500, a stream without [DONE], a hung stream, the node gone mid-
 * stream) reach the client as OpenAI-shaped errors and the record says why.
 */
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { localInstances } from '../../../../shared/instance-state';
import { ApiError, errorBody, rejected, toApiError } from '../../api/api-error';
import { parseKeepAlive } from '../../on-demand/keep-alive';
import { clientOf, openAiRoutes } from '../../api/openai-routes';
import { validateJson } from '../../api/read-json-body';
import { RouteTable, type ApiRoute, type HttpMethod, type RouteContext } from '../../api/route-types';
import { ExoChatRequestSchema, RoutableSchema, type ExoChatRequest } from './exo-chat-schema';
import { HeldCancelled, type ExoHold } from './exo-hold';
import type { ExoStateSource, ExoTraffic, ProxiedRequest } from './exo-traffic';
import { toExoChatBody } from './exo-declared-fields';
import { callExo, HOP_BY_HOP, readAll, type UpstreamCall } from './exo-upstream';
import { cancelledStreamEnding } from './cancelled-ending';
import { refuseDownloadedNotPlaced } from './exo-not-placed';
import { SseTap } from './sse-tap';
import { CANCELLED_BY_POST, ProxiedRequestState, type StreamStop } from './proxied-request-state';

interface ProxiedCall {
  life: ProxiedRequestState;
  abort: () => void;
}

export interface ExoProxyOptions {
  /** The attached exo (null: none attached, everything goes to the local routes). */
  source: () => ExoStateSource | null;
  traffic: ExoTraffic;
  hold: ExoHold;
  /** The models the attached exo serves; by default those with an instance in its state. */
  exoModels?: () => ReadonlySet<string>;
  /**
   * Longest silence from exo on an open request before it counts as hung. exo writes a
   * keep-alive after 10 s without output, so 30 s of nothing means the node is stuck.
   */
  idleTimeoutMs?: number;
  /**
   * The setting `exo.placeOnDemand`; off (the default): a request for a model exo has
   * downloaded but not placed gets a 404 that says how to place it (exo-not-placed.ts).
   */
  placeOnDemand?: () => boolean;
  /**
   * Places a model on exo and resolves when its runners are ready (exo-place-on-demand.ts);
   * with `placeOnDemand` on, a request for a model exo has downloaded but not placed waits
   * for it. `used` restarts the model's idle clock when a request ends.
   */
  placer?: { place(model: string, keepAliveSeconds?: number | null): Promise<void>; use(model: string): void };
  /** The routes a non-exo request falls through to (default: exobar's OpenAI routes). */
  localRoutes?: ApiRoute[];
}

export const DEFAULT_EXO_IDLE_TIMEOUT_MS = 30_000;

/** The models an exo state has instances of. */
export function exoModelsOf(source: ExoStateSource | null): ReadonlySet<string> {
  const instances = source?.reading.instances;
  return new Set(instances ? [...instances.values()].map((i) => i.modelId) : []);
}

const epochOf = (arrivedAt: number) => Date.now() - (performance.now() - arrivedAt);

function passHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(key)) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function exoMessage(body: Buffer): string {
  try {
    const json = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown }; detail?: unknown };
    if (typeof json.error?.message === 'string') return json.error.message;
    if (json.detail !== undefined) return JSON.stringify(json.detail).slice(0, 300);
  } catch {
    // not JSON
  }
  return body.toString('utf8').slice(0, 300) || '(empty body)';
}

function parseOrText(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return body.toString('utf8').slice(0, 300);
  }
}

/** The request's `keep_alive` (Ollama's), as seconds (null: for good); undefined when it sent none. */
function keepAliveOf(body: ExoChatRequest): number | null | undefined {
  const value = (body as { keep_alive?: unknown }).keep_alive;
  if (value == null) return undefined;
  try {
    if (typeof value !== 'number' && typeof value !== 'string') throw new Error('keep_alive is seconds, a duration ("5m"), or -1 for never');
    return parseKeepAlive(value);
  } catch (error) {
    throw rejected(400, 'invalid_keep_alive', (error as Error).message, 'keep_alive');
  }
}

const CancelParamsSchema = z.object({ id: z.string().min(1).max(200) });

/** The proxy's routes; register them before exobar's own (`extraRoutes`). */
export function exoProxyRoutes(options: ExoProxyOptions): ApiRoute[] {
  const { traffic, hold } = options;
  const local = new RouteTable(options.localRoutes ?? openAiRoutes());
  const idleMs = options.idleTimeoutMs ?? DEFAULT_EXO_IDLE_TIMEOUT_MS;
  const exoModels = () => options.exoModels?.() ?? exoModelsOf(options.source());
  /** Each proxied request in flight: its life, and how to stop its upstream call (client gone, cancel without a command id). */
  const calls = new Map<ProxiedRequest, ProxiedCall>();

  /** A request's life; entering an end records it, a refused change is counted on the traffic. */
  function lifeOf(record: ProxiedRequest, initial: 'loading' | 'waiting'): ProxiedCall {
    const call: ProxiedCall = {
      life: new ProxiedRequestState(initial, {
        changed: (change) => {
          if (change.to === 'done') traffic.finish(record, 'done');
          else if (change.to === 'cancelled' || change.to === 'failed') traffic.finish(record, change.to, change.reason);
        },
        refused: (change) => traffic.refusedTransition(record, change),
      }),
      abort: () => undefined,
    };
    calls.set(record, call);
    return call;
  }

  /** Hands the request to exobar's own route for the path, with the body already read. */
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

  /** Tells exo to cancel the record's command on the node that received it; returns exo's answer. */
  async function cancelAtExo(record: ProxiedRequest): Promise<{ status: number; body: Buffer } | null> {
    if (!record.commandId) return null;
    const call = callExo(record.upstreamUrl, 'POST', `/v1/cancel/${encodeURIComponent(record.commandId)}`);
    const res = await call.response;
    return { status: res.statusCode ?? 0, body: await readAll(res, 64 * 1024) };
  }

  async function chat(ctx: RouteContext): Promise<void> {
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    const source = options.source();
    if (!source || !routable.success) return delegate(ctx, json);
    const model = routable.data.model;
    if (!exoModels().has(model)) {
      // Downloaded on exo, not placed: say so instead of loading it locally or "unknown model" (a local instance of it still serves).
      const notPlaced = localInstances(ctx.node.snapshot()).some((i) => i.model === model) ? null : refuseDownloadedNotPlaced(source, model, exoModels());
      if (!notPlaced) return delegate(ctx, json);
      if (options.placeOnDemand?.() !== true || !options.placer) throw notPlaced;
      const body = validateJson(json, ExoChatRequestSchema);
      return placeThenProxy(ctx, body, source, options.placer);
    }
    const body = validateJson(json, ExoChatRequestSchema);
    await proxyChat(ctx, body, source);
  }

  /**
   * `exo.placeOnDemand` on: the request waits as "loading" while exobar places its model
   * on exo, then goes on as any proxied request, its TTFT with the `load` part. A refusal
   * is its answer, in words, not retried by OpenAI clients (`x-should-retry: false`).
   */
  async function placeThenProxy(
    ctx: RouteContext,
    body: ExoChatRequest,
    source: ExoStateSource,
    placer: NonNullable<ExoProxyOptions['placer']>,
  ): Promise<void> {
    const keepAlive = keepAliveOf(body);
    const record = traffic.begin(body.model, source.url, body.stream === true, epochOf(ctx.arrivedAt), clientOf(ctx));
    traffic.loading(record);
    const call = lifeOf(record, 'loading');
    const gone = () => {
      if (call.life.state === 'loading') call.life.to('cancelled', 'the client went away while exobar placed the model on exo');
    };
    ctx.res.once('close', gone);
    try {
      await placer.place(body.model, keepAlive);
    } catch (error) {
      const api = toApiError(error);
      call.life.to('failed', api.message);
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
      await proxyChat(ctx, forward as ExoChatRequest, source, record, call);
    } finally {
      placer.use(body.model);
    }
  }

  async function proxyChat(ctx: RouteContext, body: ExoChatRequest, source: ExoStateSource, begun?: ProxiedRequest, begunCall?: ProxiedCall): Promise<void> {
    const stream = body.stream === true;
    const record = begun ?? traffic.begin(body.model, source.url, stream, epochOf(ctx.arrivedAt), clientOf(ctx));
    const call = begunCall ?? lifeOf(record, 'waiting');
    const { life } = call;
    ctx.res.on('close', () => {
      calls.delete(record);
      if (ctx.res.writableFinished) return;
      if (life.state === 'held' && hold.cancel(record, 'the client went away while exobar held the request')) return;
      if (!life.ended) {
        // exobar cancels for the client: exo would keep generating for nobody.
        traffic.reconcile();
        life.to('cancelled', 'the client went away');
        void cancelAtExo(record).catch(() => undefined);
      }
      call.abort();
    });

    const admitted = hold.admit(record);
    if (record.phase === 'held') life.to('held', 'the hold keeps it while its model prefills another stream');
    try {
      await admitted;
    } catch (error) {
      if (!(error instanceof HeldCancelled)) throw error;
      life.to('cancelled', error.message);
    }
    if (life.ended) {
      // Cancelled before exo saw it: an empty answer that ends as cancelled.
      if (life.state === 'cancelled') answerCancelled(ctx, record, stream);
      return;
    }
    if (ctx.res.destroyed) return;
    if (record.sentAt == null) traffic.sent(record);
    life.to('dispatched', 'sent to exo');

    const idleS = idleMs / 1000;
    const idle = setTimeout(() => {
      // A cancelling request ends as its cancel whatever exo does; any other is hung.
      if (life.state === 'dispatched') {
        life.fail(
          { code: 'exo_timeout', message: `the exo node at ${record.upstreamUrl} did not answer within ${idleS} s; its request was cancelled` },
          `exo at ${record.upstreamUrl} sent no answer within ${idleS} s`,
        );
        void cancelAtExo(record).catch(() => undefined);
      } else if (life.state === 'answering') {
        life.fail({ code: 'exo_timeout', message: `the exo node at ${record.upstreamUrl} stopped answering` }, `exo sent nothing for ${idleS} s`);
      } else if (life.state === 'streaming') {
        life.fail({ code: 'exo_timeout', message: `exo sent nothing on the stream for ${idleS} s (hung); exobar cancelled the request` });
        void cancelAtExo(record).catch(() => undefined);
      }
      call.abort();
    }, idleMs);
    idle.unref();
    // Only the fields exo declares go to exo; the client is told which were left out.
    const sent = toExoChatBody(body);
    if (sent.dropped.length > 0 && !ctx.res.headersSent) ctx.res.setHeader('x-exobar-dropped-fields', sent.dropped.join(', ').slice(0, 2_000));
    const upstream: UpstreamCall = callExo(record.upstreamUrl, 'POST', '/v1/chat/completions', JSON.stringify(sent.body));
    call.abort = () => upstream.req.destroy();
    let res: IncomingMessage;
    try {
      res = await upstream.response;
    } catch (error) {
      clearTimeout(idle);
      calls.delete(record);
      // Cancelled before exo answered: its connection closed as the cancel.
      if (life.state === 'cancelling') life.to('cancelled', CANCELLED_BY_POST);
      if (life.state === 'cancelled') return answerCancelled(ctx, record, stream);
      if (life.failure) throw new ApiError(504, life.failure.code, life.failure.message);
      if (life.ended) return;
      const cause = error instanceof Error ? error.message : String(error);
      life.to('failed', `exo at ${record.upstreamUrl} could not be reached: ${cause}`);
      throw new ApiError(
        502,
        'exo_unreachable',
        `the exo node at ${record.upstreamUrl} could not be reached (${cause}); exobar keeps serving its local models`,
      );
    }
    const status = res.statusCode ?? 502;
    const isStream = status === 200 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
    life.answerBegan(isStream ? 'stream' : 'whole');
    if (!isStream) {
      let whole: Buffer;
      try {
        whole = await readAll(res);
      } catch (error) {
        clearTimeout(idle);
        calls.delete(record);
        if (life.state === 'cancelling') life.to('cancelled', CANCELLED_BY_POST);
        if (life.state === 'cancelled') return answerCancelled(ctx, record, stream);
        if (life.failure) throw new ApiError(504, life.failure.code, life.failure.message);
        life.fail(
          { code: 'exo_connection_lost', message: `the exo node at ${record.upstreamUrl} closed the connection before its answer ended` },
          `the exo node closed the connection mid-answer: ${(error as Error).message}`,
        );
        throw new ApiError(502, life.failure!.code, life.failure!.message);
      }
      clearTimeout(idle);
      calls.delete(record);
      if (status >= 200 && status < 300) recordWhole(record, life, whole);
      else life.to('failed', `exo answered ${status}: ${exoMessage(whole)}`);
      if (ctx.res.destroyed) return;
      // exo's own status and body: its errors keep their shape.
      ctx.res.writeHead(status, { ...passHeaders(res), 'Content-Length': String(whole.length) });
      ctx.res.end(whole);
      return;
    }
    pipeStream(ctx, record, life, res, idle);
  }
  /** Answers a request exobar cancelled before exo's answer began, as a cancelled local request ends. */
  function answerCancelled(ctx: RouteContext, record: ProxiedRequest, stream: boolean): void {
    if (ctx.res.destroyed || ctx.res.headersSent) return;
    if (stream) {
      ctx.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      ctx.res.end(cancelledStreamEnding(record));
    } else {
      ctx.json(200, {
        id: record.commandId ?? record.id,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: record.model,
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'cancelled' }],
      });
    }
  }

  function recordWhole(record: ProxiedRequest, life: ProxiedRequestState, whole: Buffer): void {
    if (life.ended) return;
    try {
      const json = JSON.parse(whole.toString('utf8')) as { id?: string; usage?: { prompt_tokens?: number; completion_tokens?: number } };
      traffic.token(record, typeof json.id === 'string' ? json.id : null, 1);
      traffic.usage(record, json.usage?.prompt_tokens ?? null, json.usage?.completion_tokens ?? null);
    } catch {
      // exo's body is passed on as it is; only the record misses its figures
    }
    life.to('done', "exo's whole answer came");
  }

  function pipeStream(ctx: RouteContext, record: ProxiedRequest, life: ProxiedRequestState, res: IncomingMessage, idle: NodeJS.Timeout): void {
    const tap = new SseTap({
      progress: (p, t) => traffic.progress(record, p, t),
      token: (id, content) => {
        if (content) traffic.token(record, id);
        else if (id && !record.commandId) traffic.claim(record, id);
      },
      usage: (p, c) => traffic.usage(record, p, c),
      error: (message) => life.sawStreamError(message),
      stats: (stats) => traffic.generationStats(record, stats),
      done: () => life.sawStreamDone(),
    });
    ctx.res.writeHead(200, { 'Content-Type': String(res.headers['content-type']), 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    ctx.res.flushHeaders();
    // The state says how it ends: a request exobar cancelled ends as a cancel, whether
    // exo's stream closes before or after exo answers the cancel.
    const stopped = (stop: StreamStop) => {
      clearTimeout(idle);
      calls.delete(record);
      res.removeAllListeners('data');
      const last = life.streamStopped(
        stop,
        { code: 'exo_stream_incomplete', message: `exo's stream for ${record.model} ended without [DONE]; the answer is incomplete` },
        { code: 'exo_connection_lost', message: `the exo node at ${record.upstreamUrl} closed the connection mid-stream` },
      );
      if (!ctx.res.destroyed && !ctx.res.writableEnded) {
        if (last.kind === 'cancelled') ctx.res.write(cancelledStreamEnding(record));
        else if (last.kind === 'error') ctx.res.write(`data: ${JSON.stringify(errorBody(new ApiError(502, last.failure.code, last.failure.message)))}\n\n`);
      }
      if (!ctx.res.writableEnded) ctx.res.end();
    };
    res.on('data', (chunk: Buffer) => {
      idle.refresh();
      // The client's bytes first, unchanged; the record reads them after.
      if (!ctx.res.write(chunk)) {
        res.pause();
        ctx.res.once('drain', () => res.resume());
      }
      tap.feed(chunk);
    });
    res.on('end', () => stopped('end'));
    res.on('close', () => stopped('close'));
  }

  async function cancel(ctx: RouteContext): Promise<void> {
    const { id } = CancelParamsSchema.parse(ctx.params);
    const record = traffic.find(id);
    const call = record ? calls.get(record) : undefined;
    if (!record || !call || call.life.ended) return delegate(ctx);
    const { life } = call;
    if (life.state === 'held' && hold.cancel(record, 'cancelled by POST /v1/cancel while held by exobar')) {
      ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: true, exo: null });
      return;
    }
    traffic.reconcile();
    if (!record.commandId) {
      // exo's command id is not known yet: closing the connection is exo's own cancel.
      life.to('cancelled', `${CANCELLED_BY_POST} (connection to exo closed)`);
      call.abort();
      ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: false, exo: null });
      return;
    }
    let answer: { status: number; body: Buffer } | null;
    life.to('cancelling', `${CANCELLED_BY_POST}: asking exo`);
    try {
      answer = await cancelAtExo(record);
    } catch (error) {
      life.cancelAnswered(false);
      throw new ApiError(502, 'exo_unreachable', `the cancel could not reach the exo node at ${record.upstreamUrl}: ${(error as Error).message}`);
    }
    const exo = answer ? { url: record.upstreamUrl, status: answer.status, body: parseOrText(answer.body) } : null;
    life.cancelAnswered(answer?.status === 200);
    if (answer?.status === 200) {
      ctx.json(200, { id: record.commandId, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: false, exo });
      return;
    }
    ctx.json(answer?.status === 404 ? 404 : 502, {
      ...errorBody(new ApiError(404, 'request_not_found', `exo did not take the cancel: ${answer ? exoMessage(answer.body) : 'no answer'}`, { param: 'id' })),
      exo,
    });
  }

  async function models(ctx: RouteContext): Promise<void> {
    let localBody: { data?: Array<{ id: string }> } = {};
    await delegate({ ...ctx, json: (_status, body) => (localBody = body as typeof localBody) });
    const exo = [...exoModels()].map((id) => ({
      id,
      object: 'model' as const,
      created: 0,
      owned_by: 'exo',
      name: id.split('/').pop() ?? id,
      engine: 'exo',
      simulated: false,
      ready: true,
      exo_url: options.source()?.url ?? null,
    }));
    const exoIds = new Set(exo.map((m) => m.id));
    ctx.json(200, { object: 'list', data: [...(localBody.data ?? []).filter((m) => !exoIds.has(m.id)), ...exo] });
  }

  /** Any other /v1/ path: exobar's own if it has one, else exo's, passed through. */
  async function passThrough(ctx: RouteContext): Promise<void> {
    const source = options.source();
    const method = ctx.req.method ?? 'GET';
    const match = local.match(method, ctx.url.pathname);
    if (!source || !('allowed' in match) || match.allowed.length > 0) return delegate(ctx);
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
  }

  const methods: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return [
    { method: 'POST', path: '/v1/chat/completions', auth: false, handle: chat },
    { method: 'GET', path: '/v1/models', auth: false, handle: models },
    { method: 'POST', path: '/v1/cancel/:id', auth: false, handle: cancel },
    ...methods.map((method) => ({ method, path: '/v1/:rest*', auth: false, handle: passThrough })),
  ];
}
