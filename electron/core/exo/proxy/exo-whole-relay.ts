/**
 * exo's whole (non-stream) answer to a proxied request: read whole, recorded (its id
 * and usage), then passed to the client with exo's own status and body, so exo's errors
 * keep their shape. A connection lost mid-answer fails the request as
 * `exo_connection_lost`, unless a cancel or a timeout already decided how it ends.
 */
import { ApiError } from '../../api/api-error';
import { answeredByLife } from './cancelled-ending';
import { exoMessage } from './exo-answer-text';
import type { ExoTraffic } from './exo-traffic';
import { passHeaders, readAll } from './exo-upstream';
import type { RelayedAnswer } from './proxied-call';

/** Relays exo's whole answer; `stream` is whether the client asked for a stream (how a cancel is answered). */
export async function relayWhole(traffic: ExoTraffic, answer: RelayedAnswer, stream: boolean): Promise<void> {
  const { ctx, record, life, res, idle } = answer;
  const status = res.statusCode ?? 502;
  let whole: Buffer;
  try {
    whole = await readAll(res);
  } catch (error) {
    clearTimeout(idle);
    answer.done();
    if (answeredByLife(ctx, record, life, stream, answer.dialect.answerCancelled)) return;
    life.fail(
      { code: 'exo_connection_lost', message: `the exo node at ${record.upstreamUrl} closed the connection before its answer ended` },
      `the exo node closed the connection mid-answer: ${(error as Error).message}`,
    );
    throw new ApiError(502, life.failure!.code, life.failure!.message);
  }
  clearTimeout(idle);
  answer.done();
  if (status >= 200 && status < 300) recordWhole(traffic, answer, whole);
  else life.failAnswered(`exo_http_${status}`, `exo answered ${status}: ${exoMessage(whole)}`);
  if (ctx.res.destroyed) return;
  // exo's own status and body: its errors keep their shape.
  ctx.res.writeHead(status, { ...passHeaders(res), 'Content-Length': String(whole.length) });
  ctx.res.end(whole);
}

function recordWhole(traffic: ExoTraffic, answer: RelayedAnswer, whole: Buffer): void {
  const { record, life } = answer;
  if (life.ended) return;
  try {
    const figures = answer.dialect.whole(JSON.parse(whole.toString('utf8')));
    traffic.token(record, figures.commandId, 1);
    traffic.usage(record, figures.promptTokens, figures.completionTokens);
  } catch {
    // exo's body is passed on as it is; only the record misses its figures
  }
  life.to('done', "exo's whole answer came");
}
