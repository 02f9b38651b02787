/**
 * The note put before the verdict of a request that ended (cancelled or failed) before
 * its first token: how far its prefill got. It is no cause of its own, since the wait
 * until the end still has one, but it tells the reader the request never finished.
 */
import type { RequestTimeline } from '../../node/node-types';
import { processed, type DiagnosisContext } from '../diagnosis-context';

/** "Cancelled part-way through its prefill, at 12288 of 30007 prompt tokens." for a request that ended before its first token; null otherwise. */
export function endedPartWay(ctx: DiagnosisContext, t: RequestTimeline): string | null {
  if (t.firstTokenAt !== null || (t.outcome !== 'cancelled' && t.outcome !== 'failed')) return null;
  const done = processed(ctx, t).tokens;
  const verb = t.outcome === 'cancelled' ? 'Cancelled' : 'Failed';
  if (done === 0) return `${verb} before its prefill made progress (0 of ${t.promptTokens} prompt tokens processed).`;
  return `${verb} part-way through its prefill, at ${done} of ${t.promptTokens} prompt tokens.`;
}
