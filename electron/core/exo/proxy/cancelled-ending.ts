/**
 * How a proxied stream that exobar cancelled ends for its client: as a cancelled local
 * request's stream does, a last chunk with `finish_reason: "cancelled"`, then
 * `data: [DONE]`.
 *
 * Why exobar writes it: real exo closes a cancelled command's stream before it answers
 * `POST /v1/cancel/{id}` (its `cancel_command` closes the sender, then replies), with
 * no finish reason and no `[DONE]` (test/fixtures/exo/real/stream-cancelled.sse.txt).
 * Passed on as it is, that ending reads as a truncated answer.
 */
import { finishChunk } from '../../api/openai-format';
import type { ProxiedRequest } from './exo-traffic';

/** The SSE text that ends `record`'s stream as cancelled. */
export function cancelledStreamEnding(record: Pick<ProxiedRequest, 'id' | 'commandId' | 'model' | 'arrivedAt'>): string {
  const chunk = finishChunk({ id: record.commandId ?? record.id, created: Math.floor(record.arrivedAt / 1000), model: record.model }, 'cancelled');
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
