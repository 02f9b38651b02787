/**
 * The verdicts for a request that waited in its runner: acknowledged, then held in the
 * runner's own queue until its turn, while the runner admitted and prefilled the prompts
 * that came before it (a runner admits one prompt per step, its whole prefill inside).
 * That time is not this request's prefill, and said apart from it.
 */
import type { Cause, FallbackCause } from '../diagnosis-context';
import { ms, r1 } from '../diagnosis-format';
import { sameRunnerPrefillMsWithin } from './same-runner-prefill';

/** The window of the wait: from the acknowledgement to the start of its own prefill (or `until`). */
function waitWindow(t: { acknowledgedAt: number | null; prefillStartAt: number | null }, until: number): [number, number] {
  const from = t.acknowledgedAt ?? until;
  return [from, Math.max(from, Math.min(t.prefillStartAt ?? until, until))];
}

/** `queued_behind_same_model_prefill`: the same runner prefilled earlier prompts for at least half the wait. Not a bug. */
export const waitedInRunnerBehindPrompts: Cause = (ctx, { t, parts, until }) => {
  const runnerWaitMs = parts.runnerWaitMs ?? 0;
  const [from, to] = waitWindow(t, until);
  const othersMs = sameRunnerPrefillMsWithin(ctx, t, from, to);
  if (othersMs < runnerWaitMs / 2) return null;
  const earlier = (ctx.byInstance.get(t.instanceId) ?? []).filter(
    (o) => o !== t && o.acknowledgedAt !== null && o.acknowledgedAt <= from && (o.firstTokenAt ?? o.endedAt ?? Infinity) > from,
  );
  return {
    cause: 'queued_behind_same_model_prefill',
    bugToReport: false,
    explanation:
      `Waited ${ms(runnerWaitMs)} in the runner for its turn: acknowledged at once, but for ${ms(othersMs)} of that the runner was ` +
      `prefilling the ${earlier.length} prompt${earlier.length === 1 ? '' : 's'} of the same model ahead of it (a runner admits one prompt per step). ` +
      'Its own prefill came after, and other models were not held up by it.',
    evidence: { runnerWaitMs, sameRunnerPrefillOverlapMs: r1(othersMs), promptsAhead: earlier.length },
  };
};

/** `unexplained`: a long wait in the runner that no prefill of the same runner accounts for. */
export const unexplainedRunnerWait: FallbackCause = (ctx, { t, parts, until }) => {
  const runnerWaitMs = parts.runnerWaitMs ?? 0;
  const [from, to] = waitWindow(t, until);
  return {
    cause: 'unexplained',
    bugToReport: false,
    explanation:
      `Waited ${ms(runnerWaitMs)} in the runner for its turn with no prefill of the same runner to explain it` +
      (t.outcome === 'in_flight' ? ' (still waiting at export: a stuck runner is likely; see its logs and the watchdog limits).' : '.'),
    evidence: { runnerWaitMs, sameRunnerPrefillOverlapMs: r1(sameRunnerPrefillMsWithin(ctx, t, from, to)) },
  };
};
