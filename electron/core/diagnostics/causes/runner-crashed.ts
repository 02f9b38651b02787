/** `runner_crashed`: the runner process died while the request was in flight. */
import type { Cause } from '../diagnosis-context';
import { runnerDeath } from './runner-death';

/**
 * The verdict for a request that failed with runner_crashed; null for any other failure.
 * Names the signal or exit code when the exit was recorded, and the runner's stderr
 * log in the bundle, where the reason usually is.
 */
export const runnerCrashed: Cause = (ctx, { t, until }) => {
  const code = ctx.codes.get(t.requestId);
  if (t.outcome !== 'failed' || code !== 'runner_crashed') return null;
  const { exit, evidence } = runnerDeath(ctx, t, code, until);
  const how = exit?.signal ? `signal ${exit.signal}` : exit?.code != null ? `exit code ${exit.code}` : 'an unknown exit';
  return {
    cause: 'runner_crashed',
    bugToReport: false,
    explanation: `The runner of ${t.instanceId} died (${how}) while this request was in flight; see runners/${t.instanceId}/stderr.log.`,
    evidence,
  };
};
