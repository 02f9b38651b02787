/** `runner_load_stalled`: the request waited for a load that stopped moving. */
import type { Cause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';

/**
 * The verdict for a wait dominated by the load part, when runner_load_stalled was on for
 * its instance while it waited (raised before it got its answer, not cleared before it
 * came): not a slow load but one that stopped (no new layer,
 * no new status past the threshold). Never exobar's bug; the disk, the memory or the
 * runner is where to look.
 */
export const loadStalled: Cause = (ctx, { t, until, parts }) => {
  const mine = ctx.loadStalls.filter((e) => e.data.instanceIds.includes(t.instanceId));
  const stall = mine.findLast((e) => e.kind === 'warning_raised' && e.t <= until);
  if (!stall || mine.some((e) => e.kind === 'warning_cleared' && e.t >= stall.t && e.t <= t.arrivedAt)) return null;
  const loadMs = parts.loadMs ?? 0;
  return {
    cause: 'runner_load_stalled',
    bugToReport: false,
    explanation:
      `Waited ${ms(loadMs)} for ${t.model} to load, and the load had stopped moving ` +
      `(${stall.t >= t.arrivedAt ? `${ms(stall.t - t.arrivedAt)} after the request came` : 'before the request came'}; ` +
      'runner_load_stalled: no new layer or status past its threshold); check the disk the model is read from, free memory and the runner log.',
    evidence: { loadMs, stalledAt: Math.round(stall.t - t.arrivedAt) },
  };
};
