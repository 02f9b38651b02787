/** `waiting_for_runner`: the node held the task because its runner could not take it yet. */
import type { Cause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';
import { dispatchFacts } from './dispatch-facts';

/**
 * The verdict for a dispatch gap while the runner was starting, restarting or otherwise
 * not serving, or had all its in-flight slots full: legitimate waiting, not a bug.
 * Null when the runner was ready with room (then the gap is node_dispatch_delay).
 */
export const waitingForRunner: Cause = (ctx, { t, parts }) => {
  const { dispatchMs, statuses, notReady, inFlightAtArrival, freedSlot } = dispatchFacts(ctx, t, parts.dispatchMs ?? 0);
  if (notReady.length === 0 && !freedSlot) return null;
  return {
    cause: 'waiting_for_runner',
    bugToReport: false,
    explanation:
      notReady.length > 0
        ? `Waited ${ms(dispatchMs)} in the node's queue while the runner of ${t.instanceId} was not ready (${notReady.join(', ')}).`
        : `Waited ${ms(dispatchMs)} in the node's queue: ${inFlightAtArrival} requests already filled the runner's in-flight slots, and it was sent when one ended.`,
    evidence: { dispatchMs, runnerStatuses: statuses, inFlightAtArrival },
  };
};
