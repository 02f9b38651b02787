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
import { isActive, type ExoStateSource, type ExoTraffic, type ProxiedRequest } from './exo-traffic';
import { toExoChatBody } from './exo-declared-fields';
import { callExo, HOP_BY_HOP, readAll, type UpstreamCall } from './exo-upstream';
import { cancelledStreamEnding } from './cancelled-ending';
import { refuseDownloadedNotPlaced } from './exo-not-placed';
import { SseTap } from './sse-tap';

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
  /** How to stop each proxied request's upstream call (client gone, cancel without a command id). */
  const aborts = new Map<ProxiedRequest, () => void>();
  /** Requests whose cancel is on its way to exo: their stream's end is the cancel's. */
  const cancelling = new WeakSet<ProxiedRequest>();

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
    const gone = () => {
      if (isActive(record) && record.phase === 'loading') traffic.finish(record, 'cancelled', 'the client went away while exobar placed the model on exo');
    };
    ctx.res.once('close', gone);
    try {
      await placer.place(body.model, keepAlive);
    } catch (error) {
      const api = toApiError(error);
      traffic.finish(record, 'failed', api.message);
      throw new ApiError(api.status, api.code, api.message, { ...api.options, headers: { ...api.options.headers, 'x-should-retry': 'false' } });
    } finally {
      ctx.res.off('close', gone);
    }
    if (!isActive(record) || ctx.res.destroyed) return;
    traffic.loaded(record);
    try {
      await proxyChat(ctx, body, source, record);
    } finally {
      placer.use(body.model);
    }
  }

  async function proxyChat(ctx: RouteContext, body: ExoChatRequest, source: ExoStateSource, begun?: ProxiedRequest): Promise<void> {
    const stream = body.stream === true;
    const record = begun ?? traffic.begin(body.model, source.url, stream, epochOf(ctx.arrivedAt), clientOf(ctx));
    let upstream: UpstreamCall | null = null;
    let settled = false;
    const abortUpstream = () => upstream?.req.destroy();
    aborts.set(record, abortUpstream);
    ctx.res.on('close', () => {
      aborts.delete(record);
      if (settled || ctx.res.writableFinished) return;
      if (record.phase === 'held') {
        hold.cancel(record, 'the client went away while exobar held the request');
        return;
      }
      // exobar cancels for the client: exo would keep generating for nobody.
      traffic.reconcile();
      traffic.finish(record, 'cancelled', 'the client went away');
      abortUpstream();
      void cancelAtExo(record).catch(() => undefined);
    });

    try {
      await hold.admit(record);
    } catch (error) {
      if (!(error instanceof HeldCancelled)) throw error;
      settled = true;
      // Cancelled before exo saw it: an empty answer that ends as cancelled.
      answerCancelled(ctx, record, stream);
      return;
    }
    if (ctx.res.destroyed || !isActive(record)) return;
    if (record.sentAt == null) traffic.sent(record);

    let timedOut = false;
    const idle = setTimeout(() => {
      timedOut = true;
      abortUpstream();
    }, idleMs);
    idle.unref();
    // Only the fields exo declares go to exo; the client is told which were left out.
    const sent = toExoChatBody(body);
    if (sent.dropped.length > 0 && !ctx.res.headersSent) ctx.res.setHeader('x-exobar-dropped-fields', sent.dropped.join(', ').slice(0, 2_000));
    upstream = callExo(record.upstreamUrl, 'POST', '/v1/chat/completions', JSON.stringify(sent.body));
    let res: IncomingMessage;
    try {
      res = await upstream.response;
    } catch (error) {
      clearTimeout(idle);
      settled = true;
      if (!isActive(record)) {
        // Cancelled before exo answered (its connection closed as the cancel).
        if (record.phase === 'cancelled') answerCancelled(ctx, record, stream);
        return;
      }
      if (timedOut) {
        traffic.finish(record, 'failed', `exo at ${record.upstreamUrl} sent no answer within ${idleMs / 1000} s`);
        void cancelAtExo(record).catch(() => undefined);
        throw new ApiError(504, 'exo_timeout', `the exo node at ${record.upstreamUrl} did not answer within ${idleMs / 1000} s; its request was cancelled`);
      }
      const cause = error instanceof Error ? error.message : String(error);
      traffic.finish(record, 'failed', `exo at ${record.upstreamUrl} could not be reached: ${cause}`);
      throw new ApiError(
        502,
        'exo_unreachable',
        `the exo node at ${record.upstreamUrl} could not be reached (${cause}); exobar keeps serving its local models`,
      );
    }
    const status = res.statusCode ?? 502;
    const isStream = status === 200 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
    if (!isStream) {
      let whole: Buffer;
      try {
        whole = await readAll(res);
      } catch (error) {
        clearTimeout(idle);
        settled = true;
        traffic.finish(
          record,
          'failed',
          timedOut ? `exo sent nothing for ${idleMs / 1000} s` : `the exo node closed the connection mid-answer: ${(error as Error).message}`,
        );
        throw new ApiError(
          timedOut ? 504 : 502,
          timedOut ? 'exo_timeout' : 'exo_connection_lost',
          `the exo node at ${record.upstreamUrl} ${timedOut ? 'stopped answering' : 'closed the connection before its answer ended'}`,
        );
      }
      clearTimeout(idle);
      settled = true;
      if (status >= 200 && status < 300) recordWhole(record, whole);
      else traffic.finish(record, 'failed', `exo answered ${status}: ${exoMessage(whole)}`);
      if (ctx.res.destroyed) return;
      // exo's own status and body: its errors keep their shape.
      ctx.res.writeHead(status, { ...passHeaders(res), 'Content-Length': String(whole.length) });
      ctx.res.end(whole);
      return;
    }
    pipeStream(
      ctx,
      record,
      res,
      idle,
      () => timedOut,
      () => {
        settled = true;
      },
    );
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

  function recordWhole(record: ProxiedRequest, whole: Buffer): void {
    try {
      const json = JSON.parse(whole.toString('utf8')) as { id?: string; usage?: { prompt_tokens?: number; completion_tokens?: number } };
      traffic.token(record, typeof json.id === 'string' ? json.id : null, 1);
      traffic.usage(record, json.usage?.prompt_tokens ?? null, json.usage?.completion_tokens ?? null);
    } catch {
      // exo's body is passed on as it is; only the record misses its figures
    }
    traffic.finish(record, 'done');
  }

  function pipeStream(
    ctx: RouteContext,
    record: ProxiedRequest,
    res: IncomingMessage,
    idle: NodeJS.Timeout,
    timedOut: () => boolean,
    settle: () => void,
  ): void {
    let sawDone = false;
    let exoError: string | null = null;
    let ended = false;
    const tap = new SseTap({
      progress: (p, t) => traffic.progress(record, p, t),
      token: (id, content) => {
        if (content) traffic.token(record, id);
        else if (id && !record.commandId) traffic.claim(record, id);
      },
      usage: (p, c) => traffic.usage(record, p, c),
      error: (message) => {
        exoError = message;
      },
      stats: (stats) => traffic.generationStats(record, stats),
      done: () => {
        sawDone = true;
      },
    });
    ctx.res.writeHead(200, { 'Content-Type': String(res.headers['content-type']), 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
    ctx.res.flushHeaders();
    // exobar cancelled it (client gone, POST /v1/cancel): however exo's stream ends, and
    // whether it ends before or after exo answers the cancel, it ends as a cancel.
    const cancelledByExobar = () => cancelling.has(record) || record.phase === 'cancelled';
    const end = (failure: { code: string; message: string } | null) => {
      if (ended) return;
      ended = true;
      clearTimeout(idle);
      settle();
      res.removeAllListeners('data');
      if (cancelledByExobar() && !exoError) {
        traffic.finish(record, 'cancelled', 'cancelled by POST /v1/cancel');
        if (!sawDone && !ctx.res.destroyed && !ctx.res.writableEnded) ctx.res.write(cancelledStreamEnding(record));
      } else if (failure) {
        traffic.finish(record, 'failed', failure.message);
        if (!ctx.res.destroyed && !ctx.res.writableEnded)
          ctx.res.write(`data: ${JSON.stringify(errorBody(new ApiError(502, failure.code, failure.message)))}\n\n`);
      } else if (exoError) {
        traffic.finish(record, 'failed', `exo reported: ${exoError}`);
      } else {
        traffic.finish(record, 'done');
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
    res.on('end', () => {
      if (sawDone || !isActive(record)) end(null);
      else end({ code: 'exo_stream_incomplete', message: `exo's stream for ${record.model} ended without [DONE]; the answer is incomplete` });
    });
    res.on('close', () => {
      if (ended || !isActive(record)) return end(null);
      if (timedOut()) {
        void cancelAtExo(record).catch(() => undefined);
        end({ code: 'exo_timeout', message: `exo sent nothing on the stream for ${idleMs / 1000} s (hung); exobar cancelled the request` });
      } else {
        end({ code: 'exo_connection_lost', message: `the exo node at ${record.upstreamUrl} closed the connection mid-stream` });
      }
    });
  }

  async function cancel(ctx: RouteContext): Promise<void> {
    const { id } = CancelParamsSchema.parse(ctx.params);
    const record = traffic.find(id);
    if (!record || !isActive(record)) return delegate(ctx);
    if (record.phase === 'held') {
      hold.cancel(record, 'cancelled by POST /v1/cancel while held by exobar');
      ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: true, exo: null });
      return;
    }
    traffic.reconcile();
    if (!record.commandId) {
      // exo's command id is not known yet: closing the connection is exo's own cancel.
      traffic.finish(record, 'cancelled', 'cancelled by POST /v1/cancel (connection to exo closed)');
      aborts.get(record)?.();
      ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: false, exo: null });
      return;
    }
    let answer: { status: number; body: Buffer } | null;
    cancelling.add(record);
    try {
      answer = await cancelAtExo(record);
    } catch (error) {
      cancelling.delete(record);
      throw new ApiError(502, 'exo_unreachable', `the cancel could not reach the exo node at ${record.upstreamUrl}: ${(error as Error).message}`);
    }
    const exo = answer ? { url: record.upstreamUrl, status: answer.status, body: parseOrText(answer.body) } : null;
    if (answer?.status === 200) {
      traffic.finish(record, 'cancelled', 'cancelled by POST /v1/cancel');
      ctx.json(200, { id: record.commandId, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: false, exo });
      return;
    }
    cancelling.delete(record);
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
