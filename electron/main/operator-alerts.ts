/**
 * What deserves a notification, as a pure diff of consecutive snapshots: a runner
 * that failed, a runner the supervisor restarted (crash or watchdog: a runner wedged
 * on the GPU stays alive and silent, so only the watchdog notices it), and a
 * shared-GPU warning that just appeared. Each alert fires once, on the transition.
 */
import { localInstances } from '../../shared/instance-state';
import type { LocalInstanceSnapshot, Snapshot, Warning } from '../../shared/snapshot';
import { truncate } from './status-words';

export interface OperatorAlert {
  /** Stable identity of what happened, to avoid repeating the same notification. */
  key: string;
  kind: 'runner_failed' | 'runner_restarted' | 'warning';
  title: string;
  body: string;
}

function warningKey(warning: Warning): string {
  return `${warning.code}:${[...warning.instanceIds].sort().join(',')}`;
}

function exitReason(instance: LocalInstanceSnapshot): string {
  const exit = instance.runner.lastExit;
  if (!exit) return 'no exit recorded';
  const how = exit.signal ? `signal ${exit.signal}` : exit.code !== null ? `exit code ${exit.code}` : 'no exit code';
  return `${exit.reason} (${how})`;
}

/**
 * Alerts for `next` compared with `prev` (null before the first snapshot: then every
 * failure and warning in `next` is new).
 */
export function operatorAlerts(prev: Snapshot | null, next: Snapshot): OperatorAlert[] {
  const alerts: OperatorAlert[] = [];
  const before = new Map((prev ? localInstances(prev) : []).map((i) => [i.id, i]));

  // Runner restarts and exits are local runners' facts; exo instances alert through their warnings.
  for (const instance of localInstances(next)) {
    const old = before.get(instance.id);
    const restartsBefore = old?.runner.restarts ?? 0;
    const restarted = instance.runner.restarts > restartsBefore;
    const exitChanged = instance.runner.lastExit !== null && instance.runner.lastExit.at !== old?.runner.lastExit?.at;
    const failedNow = instance.runner.status.kind === 'RunnerFailed';
    const failedBefore = old?.runner.status.kind === 'RunnerFailed';

    if (failedNow && (!failedBefore || exitChanged)) {
      const message = instance.runner.status.kind === 'RunnerFailed' ? instance.runner.status.errorMessage : '';
      alerts.push({
        key: `failed:${instance.id}:${instance.runner.lastExit?.at ?? instance.runner.restarts}`,
        kind: 'runner_failed',
        title: `${instance.modelName} failed`,
        body: truncate(instance.runner.lastExit ? `${message} — ${exitReason(instance)}` : message, 200),
      });
    } else if (restarted || exitChanged) {
      const byWatchdog = instance.runner.lastExit?.reason.startsWith('watchdog') ?? false;
      alerts.push({
        key: `restarted:${instance.id}:${instance.runner.restarts}:${instance.runner.lastExit?.at ?? ''}`,
        kind: 'runner_restarted',
        title: byWatchdog ? `${instance.modelName} was stuck and was restarted` : `${instance.modelName} stopped and was restarted`,
        body: truncate(
          `${exitReason(instance)}. Restart ${instance.runner.restarts}.` +
            (byWatchdog && instance.fastSynch.enabled ? ' Fast synch is on: the GPU may stay wedged until a reboot.' : ''),
          200,
        ),
      });
    }
  }

  const seen = new Set((prev?.warnings ?? []).map(warningKey));
  for (const warning of next.warnings) {
    const key = warningKey(warning);
    if (seen.has(key)) continue;
    alerts.push({ key: `warning:${key}`, kind: 'warning', title: warning.title, body: truncate(`${warning.risk} ${warning.fix}`, 200) });
  }
  return alerts;
}
