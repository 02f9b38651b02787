/**
 * What both acknowledgement-wait causes read: the same runner's prefill that overlapped
 * the wait most. A runner reads new tasks only between generation steps, and one step
 * holds the whole prefill of an admitted prompt, so that prefill is the first suspect.
 */
import type { RequestTimeline } from '../../node/node-types';
import { prefillEnd, type DiagnosisContext } from '../diagnosis-context';
import { overlap } from '../diagnosis-format';
import { overlapMs } from '../../sharing/intervals';

/** A sibling request's prefill and how much of the wait it covered. */
export interface SameRunnerPrefill {
  o: RequestTimeline;
  start: number;
  end: number;
  overlapMs: number;
}

/** The same runner's prefill that overlapped `t`'s wait for its acknowledgement most; undefined when none did. */
export function longestSameRunnerPrefill(ctx: DiagnosisContext, t: RequestTimeline, until: number): SameRunnerPrefill | undefined {
  return longestSameRunnerPrefillWithin(ctx, t, t.dispatchedAt ?? t.arrivedAt, t.acknowledgedAt ?? until);
}

/** The same runner's prefill that overlapped [from, to] of `t`'s wait most (a sibling's prefill runs from its start, else its ack). */
export function longestSameRunnerPrefillWithin(ctx: DiagnosisContext, t: RequestTimeline, from: number, to: number): SameRunnerPrefill | undefined {
  return (ctx.byInstance.get(t.instanceId) ?? [])
    .filter((o) => o !== t && o.acknowledgedAt !== null && o.acknowledgedAt <= to)
    .map((o) => ({ o, start: o.prefillStartAt ?? o.acknowledgedAt!, end: prefillEnd(o, ctx.opts.now) }))
    .map((c) => ({ ...c, overlapMs: overlap(c.start, c.end, from, to) }))
    .filter((c) => c.overlapMs > 0)
    .sort((a, b) => b.overlapMs - a.overlapMs)[0];
}

/** Milliseconds of [from, to] during which the same runner prefilled other prompts (their union). */
export function sameRunnerPrefillMsWithin(ctx: DiagnosisContext, t: RequestTimeline, from: number, to: number): number {
  const spans = (ctx.byInstance.get(t.instanceId) ?? [])
    .filter((o) => o !== t && o.acknowledgedAt !== null)
    .map((o) => ({ start: o.prefillStartAt ?? o.acknowledgedAt!, end: prefillEnd(o, ctx.opts.now) }));
  return overlapMs(spans, from, to);
}
