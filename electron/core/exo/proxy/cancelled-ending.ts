/**
 * How a proxied stream that exobar cancelled ends for its client: as a cancelled local
 * request's stream does, a last chunk with `finish_reason: "cancelled"`, then
 * `data: [DONE]`.
 *
 * Why exobar writes it: real exo closes a cancelled command's stream before it answers
 * `POST /v1/cancel/{id}` (its `cancel_command` closes the sender, then replies), with
 * no finish reason and no `[DONE]` (test/fixtures/exo/real/stream-cancelled.sse.txt).
 * Passed on as it is, that ending reads as a truncated answer.
 *
 * Also how a request exobar cancelled before exo's answer began is answered: an empty
 * answer that ends as cancelled, streamed or whole as the client asked.
 */
import { ApiError } from '../../api/api-error';
import { finishChunk } from '../../api/openai-format';
import type { RouteContext } from '../../api/route-types';
import type { ProxiedRequest } from './exo-traffic';
import { CANCELLED_BY_POST, type ProxiedRequestState } from './proxied-request-state';

/** The SSE text that ends `record`'s stream as cancelled. */
export function cancelledStreamEnding(record: Pick<ProxiedRequest, 'id' | 'commandId' | 'model' | 'arrivedAt'>): string {
  const chunk = finishChunk({ id: record.commandId ?? record.id, created: Math.floor(record.arrivedAt / 1000), model: record.model }, 'cancelled');
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}

/** Answers a chat request exobar cancelled before exo's answer began, as a cancelled local request ends. */
export function answerCancelledChat(ctx: RouteContext, record: ProxiedRequest, stream: boolean): void {
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

/**
 * exo's answer broke off before it was whole: a cancel exobar asked for is the cancel
 * (answered as cancelled), a failure exobar already decided (the idle timer) is the
 * answer (thrown as a 504). True when one of them answered; false leaves it to the caller.
 */
export function answeredByLife(
  ctx: RouteContext,
  record: ProxiedRequest,
  life: ProxiedRequestState,
  stream: boolean,
  answerCancelled: (ctx: RouteContext, record: ProxiedRequest, stream: boolean) => void = answerCancelledChat,
): boolean {
  if (life.state === 'cancelling') life.cancel('cancel_api', CANCELLED_BY_POST);
  if (life.state === 'cancelled') {
    answerCancelled(ctx, record, stream);
    return true;
  }
  if (life.failure) throw new ApiError(504, life.failure.code, life.failure.message);
  return false;
}
