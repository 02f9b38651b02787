/**
 * One proxied request's way to exo and back, in any dialect exo serves (exo-dialect.ts): it waits in exobar's hold, goes to exo
 * with only the fields exo declares, and exo's answer is relayed as it comes (a whole
 * answer by {@link relayWhole}, a stream by {@link relayStream}). The client going away
 * cancels it at exo; a silent exo fails it after the idle timeout. Every decision reads
 * the request's state machine (proxied-request-state.ts).
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../api/api-error';
import { clientOf } from '../../api/openai-routes';
import type { RouteContext } from '../../api/route-types';
import { answeredByLife } from './cancelled-ending';
import { CHAT_DIALECT, type ExoDialect } from './exo-dialect';
import { HeldCancelled } from './exo-hold';
import type { ExoProxyContext } from './exo-proxy-context';
import { relayStream } from './exo-stream-relay';
import type { ExoStateSource, ProxiedRequest } from './exo-traffic';
import { callExo, type UpstreamCall } from './exo-upstream';
import { relayWhole } from './exo-whole-relay';
import { cancelAtExo, openProxiedCall, type ProxiedCall } from './proxied-call';

/** A body exobar sends on: its model and whether it streams, whatever else it holds (checked by its dialect's schema). */
export type ProxiedBody = Record<string, unknown> & { model: string; stream?: boolean | null };

/** The epoch ms of a `performance.now()` moment (a request's arrival). */
export const epochOf = (arrivedAt: number) => Date.now() - (performance.now() - arrivedAt);

/** Proxies a chat request for a model exo serves; `begun`/`begunCall` when it was recorded already (placed on demand). */
export async function proxyChat(
  proxy: ExoProxyContext,
  ctx: RouteContext,
  body: ProxiedBody,
  source: ExoStateSource,
  begun?: ProxiedRequest,
  begunCall?: ProxiedCall,
  dialect: ExoDialect = CHAT_DIALECT,
): Promise<void> {
  const { traffic, hold, calls } = proxy;
  const stream = body.stream === true;
  const record = begun ?? traffic.begin(body.model, source.url, stream, epochOf(ctx.arrivedAt), clientOf(ctx), dialect.api);
  const call = begunCall ?? openProxiedCall(calls, traffic, ctx.log, record, 'waiting');
  const { life } = call;
  ctx.res.on('close', () => {
    calls.delete(record);
    if (ctx.res.writableFinished) return;
    if (life.state === 'held' && hold.cancel(record, 'client_disconnect', 'the client went away while exobar held the request')) return;
    if (!life.ended) {
      // exobar cancels for the client: exo would keep generating for nobody.
      traffic.reconcile();
      life.cancel('client_disconnect', 'the client went away');
      void cancelAtExo(record).catch(() => undefined);
    }
    call.abort();
  });

  try {
    await hold.admit(record, life);
  } catch (error) {
    // Cancelled while held: the hold ended its life as cancelled.
    if (!(error instanceof HeldCancelled)) throw error;
  }
  if (life.ended) {
    // Cancelled before exo saw it: an empty answer that ends as cancelled.
    if (life.state === 'cancelled') dialect.answerCancelled(ctx, record, stream);
    return;
  }
  if (ctx.res.destroyed) return;
  if (life.state !== 'dispatched') {
    // Not held: it goes to exo now (a held one was let go, and dispatched, by the hold).
    traffic.sent(record);
    life.to('dispatched', 'sent to exo');
  }

  const idle = idleTimer(call, record, proxy.idleMs);
  // Only the fields exo declares go to exo; the client is told which were left out.
  const sent = dialect.toExoBody(body);
  if (sent.dropped.length > 0 && !ctx.res.headersSent) ctx.res.setHeader('x-exobar-dropped-fields', sent.dropped.join(', ').slice(0, 2_000));
  const upstream: UpstreamCall = callExo(record.upstreamUrl, 'POST', dialect.path, JSON.stringify(sent.body));
  call.abort = () => upstream.req.destroy();
  let res: IncomingMessage;
  try {
    res = await upstream.response;
  } catch (error) {
    clearTimeout(idle);
    calls.delete(record);
    // Cancelled before exo answered: its connection closed as the cancel.
    if (answeredByLife(ctx, record, life, stream, dialect.answerCancelled)) return;
    if (life.ended) return;
    const cause = error instanceof Error ? error.message : String(error);
    const failure = { code: 'exo_unreachable', message: `the exo node at ${record.upstreamUrl} could not be reached (${cause}); exobar keeps serving its local models` };
    life.fail(failure, `exo at ${record.upstreamUrl} could not be reached: ${cause}`);
    throw new ApiError(502, failure.code, failure.message);
  }
  const status = res.statusCode ?? 502;
  const isStream = status === 200 && String(res.headers['content-type'] ?? '').startsWith(dialect.streamContentType ?? 'text/event-stream');
  life.answerBegan(isStream ? 'stream' : 'whole');
  const relayed = { ctx, record, life, res, idle, done: () => calls.delete(record), dialect };
  if (isStream) relayStream(traffic, relayed);
  else await relayWhole(traffic, relayed, stream);
}

/**
 * The idle timeout of a request sent to exo: a cancelling request ends as its cancel
 * whatever exo does; any other is hung, fails, and is cancelled at exo.
 */
function idleTimer(call: ProxiedCall, record: ProxiedRequest, idleMs: number): NodeJS.Timeout {
  const { life } = call;
  const idleS = idleMs / 1000;
  const idle = setTimeout(() => {
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
  return idle;
}
