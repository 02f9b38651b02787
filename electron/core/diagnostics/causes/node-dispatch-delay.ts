/**
 * `node_dispatch_delay`: the node took long to write a task to a ready runner with free
 * slots. exobar writes a task the moment the runner can take it and never waits for
 * another runner's acknowledgement, so such a gap is a bug in exobar: the signature of
 * exo's blocking plan loop, the thing this product exists to avoid.
 */
import type { FallbackCause } from '../diagnosis-context';
import { ms, overlap, r1 } from '../diagnosis-format';
import { dispatchFacts } from './dispatch-facts';

/** The verdict for a dispatch gap no runner state explains (tried after waiting_for_runner). */
export const nodeDispatchDelay: FallbackCause = (ctx, { t, parts }) => {
  const { end, dispatchMs, statuses, inFlightAtArrival } = dispatchFacts(ctx, t, parts.dispatchMs ?? 0);
  const now = ctx.opts.now;
  // The plan-loop signature (docs/domain.md's diagnostic rule): another runner mid-prefill
  // with a task awaiting its ack, and this dispatch released right when that ack came.
  const blockers = ctx.timelines
    .filter((o) => o.instanceId !== t.instanceId && o.dispatchedAt !== null && o.dispatchedAt <= end)
    .filter((o) => overlap(o.dispatchedAt!, o.acknowledgedAt ?? now, t.arrivedAt, end) > 0)
    .map((o) => ({
      instanceId: o.instanceId,
      requestId: o.requestId,
      awaitingAckMs: r1(overlap(o.dispatchedAt!, o.acknowledgedAt ?? now, t.arrivedAt, end)),
      acknowledgedBeforeDispatchMs: o.acknowledgedAt !== null && t.dispatchedAt !== null ? r1(t.dispatchedAt - o.acknowledgedAt) : null,
    }))
    .sort((a, b) => b.awaitingAckMs - a.awaitingAckMs)
    .slice(0, 5);
  const signature = blockers[0]
    ? ` Meanwhile request ${blockers[0].requestId} on ${blockers[0].instanceId} waited ${ms(blockers[0].awaitingAckMs)} for its acknowledgement: ` +
      'the pattern of a dispatch loop that awaits another runner\u2019s ack (exo\u2019s blocking supervisor).'
    : '';
  return {
    cause: 'node_dispatch_delay',
    bugToReport: true,
    explanation:
      `The node took ${ms(dispatchMs)} to write this task to a ready runner with free slots (${inFlightAtArrival} in flight). ` +
      `exobar dispatches at once, so this is a bug: please report it with this bundle.${signature}`,
    evidence: { dispatchMs, runnerStatuses: statuses, inFlightAtArrival, otherRunnersAwaitingAck: blockers },
  };
};
