/** `runner_stuck`: the watchdog found the runner silent, killed it, and failed the request. */
import type { Cause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';
import { runnerDeath } from './runner-death';

/**
 * The verdict for a request that failed with runner_stuck; null for any other failure.
 * The words say why only a watchdog catches it: a runner wedged on the GPU stays
 * alive, so only missing progress shows it.
 */
export const runnerStuck: Cause = (ctx, { t, until }) => {
  const code = ctx.codes.get(t.requestId);
  if (t.outcome !== 'failed' || code !== 'runner_stuck') return null;
  const { watchdog, evidence } = runnerDeath(ctx, t, code, until);
  const deadline = watchdog?.deadlineMs != null ? ` (its deadline: ${ms(watchdog.deadlineMs)})` : '';
  const silence = watchdog?.silentMs != null ? ` after ${ms(watchdog.silentMs)} without output${deadline}` : '';
  return {
    cause: 'runner_stuck',
    bugToReport: false,
    explanation:
      `The runner of ${t.instanceId} went silent during ${watchdog?.phase ?? 'its work'}${silence}; the watchdog killed it and failed this request ` +
      '(a runner wedged on the GPU stays alive, so only missing progress shows it).' +
      (evidence.runnerStateAfter?.state === 'needs_attention' ? ` It was not relaunched: ${evidence.runnerStateAfter.reason}.` : ''),
    evidence,
  };
};
