/** `queued_behind_same_model_prefill`: written at once, acknowledged only when the same runner's long prefill ended. */
import type { Cause } from '../diagnosis-context';
import { ms, r1 } from '../diagnosis-format';
import { longestSameRunnerPrefill } from './same-runner-prefill';

/**
 * The verdict for an acknowledgement wait that the same runner's prefill covered for at
 * least half its length; null otherwise (then it is unexplained). Not a bug: the
 * runner admits new tasks only between steps, and other models were not held up.
 */
export const queuedBehindSameModelPrefill: Cause = (ctx, { t, parts, until }) => {
  const ackWaitMs = parts.ackWaitMs ?? 0;
  const blocking = longestSameRunnerPrefill(ctx, t, until);
  if (!blocking || blocking.overlapMs < ackWaitMs / 2) return null;
  const o = blocking.o;
  const prefillMs = blocking.end - blocking.start;
  return {
    cause: 'queued_behind_same_model_prefill',
    bugToReport: false,
    explanation:
      `Written to the runner at once, but acknowledged only after ${ms(ackWaitMs)}: for ${ms(blocking.overlapMs)} of that the same runner ` +
      `was in the step prefilling request ${o.requestId} (${o.promptTokens} prompt tokens, ${ms(prefillMs)} of prefill), and a runner admits ` +
      'new tasks only between steps. Other models were not held up by it.',
    evidence: {
      ackWaitMs,
      blockingRequestId: o.requestId,
      blockingPromptTokens: o.promptTokens,
      blockingPrefillMs: r1(prefillMs),
      overlapMs: r1(blocking.overlapMs),
      ackedWithinMsOfBlockingPrefillEnd: t.acknowledgedAt !== null ? r1(t.acknowledgedAt - blocking.end) : null,
    },
  };
};
