/**
 * What deserves a notification, as a pure diff of consecutive snapshots: a runner
 * that failed for good or needs attention, a runner the supervisor is restarting
 * (crash or stuck: a runner wedged on the GPU stays alive and silent, so only the
 * watchdog notices it), and a shared-GPU warning that just appeared. Each alert fires
 * once, on the transition.
 */
import { isDownForGood, localInstances } from '../../shared/instance-state';
import type { LocalInstanceSnapshot, Snapshot, Warning } from '../../shared/snapshot';
import { exoEventAlerts } from './exo-event-alerts';
import { truncate } from '../../shared/status-words';

export interface OperatorAlert {
  /** Stable identity of what happened, to avoid repeating the same notification. */
  key: string;
  kind: 'runner_failed' | 'runner_restarted' | 'warning' | 'exo_event';
  title: string;
  body: string;
}

function warningKey(warning: Warning): string {
  return `${warning.code}:${[...warning.instanceIds].sort().join(',')}`;
}

function exitReason(instance: LocalInstanceSnapshot): string {
  const exit = instance.runner.lastExit;
  if (!exit) return 'no exit recorded';
  const how = exit.signal ? `signal ${exit.signal}` : exit.exitCode !== null ? `exit code ${exit.exitCode}` : 'no exit code';
  return `${exit.message} (${how})`;
}

/** What the runner itself last said when it failed, if it did. */
function runnerWords(instance: LocalInstanceSnapshot): string | null {
  return instance.runner.status.kind === 'RunnerFailed' ? instance.runner.status.errorMessage : null;
}

/**
 * Alerts for `next` compared with `prev` (null before the first snapshot: then every
 * failure and warning in `next` is new). Reads the runner's typed state and the exit's
 * cause, never the wording of a message.
 */
export function operatorAlerts(prev: Snapshot | null, next: Snapshot): OperatorAlert[] {
  const alerts: OperatorAlert[] = [];
  const before = new Map((prev ? localInstances(prev) : []).map((i) => [i.id, i]));

  // Runner restarts and exits are local runners' facts; exo instances alert through their warnings.
  for (const instance of localInstances(next)) {
    const old = before.get(instance.id);
    const { state, lastExit } = instance.runner;
    const exitChanged = lastExit !== null && lastExit.at !== old?.runner.lastExit?.at;
    const downForGood = isDownForGood(instance);

    if (downForGood && (old?.runner.state !== state || exitChanged)) {
      alerts.push({
        key: `${state}:${instance.id}:${lastExit?.at ?? instance.runner.restarts}`,
        kind: 'runner_failed',
        title: state === 'needs_attention' ? `${instance.modelName} needs attention` : `${instance.modelName} failed`,
        body: truncate([lastExit ? exitReason(instance) : runnerWords(instance), instance.runner.attention].filter(Boolean).join(' — '), 200),
      });
    } else if (state === 'restarting' && exitChanged) {
      const stuck = lastExit.cause === 'stuck';
      const inS = instance.runner.restartAt !== null ? Math.max(0, Math.round((instance.runner.restartAt - next.at) / 1000)) : null;
      alerts.push({
        key: `restarted:${instance.id}:${lastExit.at}`,
        kind: 'runner_restarted',
        title: stuck ? `${instance.modelName} was stuck and was restarted` : `${instance.modelName} stopped and was restarted`,
        body: truncate(`${exitReason(instance)}. Restart ${instance.runner.restarts + 1}${inS !== null ? ` in ${inS} s` : ''}.`, 200),
      });
    }
  }

  const seen = new Set((prev?.warnings ?? []).map(warningKey));
  for (const warning of next.warnings) {
    const key = warningKey(warning);
    if (seen.has(key)) continue;
    alerts.push({ key: `warning:${key}`, kind: 'warning', title: warning.title, body: truncate(`${warning.risk} ${warning.fix}`, 200) });
  }
  // A Mac that left the exo cluster: its lost models come as warnings above.
  alerts.push(...exoEventAlerts(prev, next));
  return alerts;
}
