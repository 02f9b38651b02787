/** `unexplained`: a long wait for the runner's acknowledgement that no same-runner prefill accounts for. */
import type { FallbackCause } from '../diagnosis-context';
import { ms, r1 } from '../diagnosis-format';
import { longestSameRunnerPrefill } from './same-runner-prefill';

/**
 * The verdict for an acknowledgement wait queued_behind_same_model_prefill did not
 * explain. Said as unexplained rather than guessed; a request still waiting at export
 * points at a stuck runner, so the words send the reader to its logs.
 */
export const unexplainedAckWait: FallbackCause = (ctx, { t, parts, until }) => {
  const ackWaitMs = parts.ackWaitMs ?? 0;
  const blocking = longestSameRunnerPrefill(ctx, t, until);
  return {
    cause: 'unexplained',
    bugToReport: false,
    explanation:
      `Waited ${ms(ackWaitMs)} for the runner's acknowledgement with no long prefill of the same runner to explain it` +
      (t.outcome === 'in_flight' ? ' (still waiting at export: a stuck runner is likely; see its logs and the watchdog limits).' : '.'),
    evidence: { ackWaitMs, sameRunnerPrefillOverlapMs: r1(blocking?.overlapMs ?? 0) },
  };
};
