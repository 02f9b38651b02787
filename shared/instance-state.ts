/** Questions every view asks of an instance in the snapshot, answered once. */
import type { ExoInstanceSnapshot, InstanceSnapshot, LocalInstanceSnapshot, Snapshot } from './snapshot';

const SERVING = new Set(['RunnerReady', 'RunnerRunning']);
const STOPPING = new Set(['RunnerShuttingDown', 'RunnerShutdown']);

/**
 * An instance's lifecycle in one word, derived from its runners: the one answer the
 * header, the safe-launch plan and progress, the tray and the page give.
 * - loading: on its way to serving (starting, connecting, loading layers, warming up).
 * - restarting: loading again after its runner went down (crash, watchdog, relaunch).
 * - serving: takes requests now.
 * - stopping: shutting down.
 * - failed: cannot serve until someone acts (or the supervisor's next restart).
 */
export const INSTANCE_LIFECYCLES = ['loading', 'restarting', 'serving', 'stopping', 'failed'] as const;
export type InstanceLifecycle = (typeof INSTANCE_LIFECYCLES)[number];

/**
 * The derived lifecycle state of an instance. Failed wins over everything (an exo
 * instance with one failed shard cannot serve), then stopping, then serving when every
 * runner serves; anything else is still on its way up. A local runner on its way up
 * after an exit (`lastExit` set) is restarting, not loading for the first time.
 */
export function instanceLifecycle(instance: InstanceSnapshot): InstanceLifecycle {
  if (isFailed(instance)) return 'failed';
  if (instance.source === 'local') {
    // The supervisor's own state machine says it (runner.state); no guessing from statuses.
    switch (instance.runner.state) {
      case 'ready':
      case 'running':
        return 'serving';
      case 'restarting':
        return 'restarting';
      case 'stopped':
        return 'stopping';
      default:
        return 'loading';
    }
  }
  if (instance.exo.runners.some((r) => STOPPING.has(r.status))) return 'stopping';
  return isServing(instance) ? 'serving' : 'loading';
}

/** How many instances are in each lifecycle state (every state present, zero when none). */
export function lifecycleCounts(instances: readonly InstanceSnapshot[]): Record<InstanceLifecycle, number> {
  const counts = Object.fromEntries(INSTANCE_LIFECYCLES.map((s) => [s, 0])) as Record<InstanceLifecycle, number>;
  for (const instance of instances) counts[instanceLifecycle(instance)] += 1;
  return counts;
}

/**
 * True when the instance can take requests now (exo's RunnerReady or RunnerRunning):
 * for a local instance its one runner; for an exo instance every runner of every shard.
 */
export function isServing(instance: InstanceSnapshot): boolean {
  if (instance.source === 'local') return SERVING.has(instance.runner.status.kind);
  return instance.exo.runners.length > 0 && instance.exo.runners.every((r) => r.known && SERVING.has(r.status));
}

/**
 * "2 serving · 1 loading": the counts that are not zero, in lifecycle order; "none"
 * with no instances. The same words in the tray's tooltip and the page's header.
 */
export function lifecycleSummary(instances: readonly InstanceSnapshot[]): string {
  const counts = lifecycleCounts(instances);
  const parts = INSTANCE_LIFECYCLES.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s}`);
  return parts.length > 0 ? parts.join(' · ') : 'none';
}

/** True for an instance whose runner this node supervises. */
export function isLocal(instance: InstanceSnapshot): instance is LocalInstanceSnapshot {
  return instance.source === 'local';
}

/** The instances whose runners this node supervises (the ones with runner, fast synch, engine and counters). */
export function localInstances(snapshot: Pick<Snapshot, 'instances'>): LocalInstanceSnapshot[] {
  return snapshot.instances.filter(isLocal);
}

/** The instances of an attached exo cluster. */
export function exoInstances(snapshot: Pick<Snapshot, 'instances'>): ExoInstanceSnapshot[] {
  return snapshot.instances.filter((i): i is ExoInstanceSnapshot => i.source === 'exo');
}

/**
 * True when the instance cannot serve until someone acts: a local runner in
 * RunnerFailed (the supervisor gave up), or an exo instance with a failed runner.
 * The one definition the tray, the page and the alerts use.
 */
export function isFailed(instance: InstanceSnapshot): boolean {
  // Down for good: failed, or stopped and waiting for the operator (a runner restarting after a crash is not).
  if (instance.source === 'local') return instance.runner.state === 'failed' || instance.runner.state === 'needs_attention';
  return instance.exo.runners.some((r) => r.status === 'RunnerFailed');
}

/**
 * The fast-synch value a local runner reported in its hello differs from the one the
 * policy set (something in its environment overrides it): the one definition the
 * supervisor, the node's warning and the views use. Exo instances report no hello;
 * their mismatch comes as an `exo_fast_synch_mismatch` warning.
 */
export function fastSynchMismatch(instance: InstanceSnapshot): boolean {
  if (instance.source !== 'local') return false;
  return reportedFastSynchDiffers(instance.fastSynch.enabled, instance.fastSynch.reported);
}

/** True when a runner reported a fast-synch value (not null) other than the expected one. */
export function reportedFastSynchDiffers(expected: boolean, reported: boolean | null): boolean {
  return reported !== null && reported !== expected;
}
