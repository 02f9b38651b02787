/**
 * `POST /v1/cancel/{id}` on the proxy: a proxied request's cancel. Held by exobar, it
 * leaves the hold; not yet known to exo by its command id, its connection to exo closes
 * (exo's own cancel); else exo is asked on the node that received it (exo cancels only
 * there), and the answer says whether exo took it. An id the proxy does not hold in
 * flight falls through to exobar's own cancel route.
 */
import { z } from 'zod';
import { ApiError, errorBody } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import { exoMessage, parseOrText } from './exo-answer-text';
import { commandIdOfMessage } from './exo-messages-dialect';
import { commandIdOfResponse } from './exo-responses-dialect';
import type { ExoProxyContext } from './exo-proxy-context';
import { cancelAtExo } from './proxied-call';
import { CANCELLED_BY_POST } from './proxied-request-state';

const CancelParamsSchema = z.object({ id: z.string().min(1).max(200) });

/** The handler of `POST /v1/cancel/:id`. */
export function cancelRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  const { traffic, hold, calls } = proxy;
  return async (ctx) => {
    const { id } = CancelParamsSchema.parse(ctx.params);
    // exo's Messages and Responses streams name their command `msg_<command id>`, `resp_<command id>`: any of the ids cancels.
    const record = traffic.find(id) ?? traffic.find(commandIdOfMessage(id)) ?? traffic.find(commandIdOfResponse(id));
    const call = record ? calls.get(record) : undefined;
    if (!record || !call || call.life.ended) return proxy.delegate(ctx);
    const { life } = call;
    if (life.state === 'held' && hold.cancel(record, 'cancel_api', 'cancelled by POST /v1/cancel while held by exobar')) {
      ctx.json(200, { id, object: 'chat.completion.cancellation', cancelled: true, held_by_exobar: true, exo: null });
      return;
    }
    traffic.reconcile();
    if (!record.commandId) {
      // exo's command id is not known yet: closing the connection is exo's own cancel.
      life.cancel('cancel_api', `${CANCELLED_BY_POST} (connection to exo closed)`);
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
  };
}
