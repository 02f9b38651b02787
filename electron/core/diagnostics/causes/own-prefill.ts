/** `own_prefill`: the prompt is long and nothing else held it up. */
import type { FallbackCause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';
import { computeFacts } from './compute-facts';

/**
 * The verdict for a compute part shared_gpu did not explain. The words count only the
 * tokens the runner processed, so a request cancelled part-way is not said to have
 * prefilled its whole prompt.
 */
export const ownPrefill: FallbackCause = (ctx, r) => {
  const { t } = r;
  const { serviceMs, slowdown, rate, done, evidence } = computeFacts(ctx, r);
  const solo = slowdown !== null ? ` (${slowdown.toFixed(2)}x the solo time of comparable prompts)` : '';
  const rateWords = rate !== null ? ` (${rate} tokens/s)` : '';
  const what =
    done.tokens === t.promptTokens
      ? `Its own prefill of ${t.promptTokens} prompt tokens took ${ms(serviceMs)}${rateWords}`
      : `Its own prefill ran ${ms(serviceMs)} and processed ${done.tokens} of its ${t.promptTokens} prompt tokens${rateWords}`;
  return {
    cause: 'own_prefill',
    bugToReport: false,
    explanation: `${what}${solo}: the prompt is long, nothing else held it up.`,
    evidence,
  };
};
