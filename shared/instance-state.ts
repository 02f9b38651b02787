/** Questions every view asks of an instance in the snapshot, answered once. */
import type { RunnerStatus } from './runner-protocol';
import type { ExoInstanceSnapshot, InstanceSnapshot, LocalInstanceSnapshot, RunnerState, Snapshot } from './snapshot';

/** The serving rule, written once: a runner serves while it is RunnerReady or RunnerRunning. */
export const SERVING_STATUSES: ReadonlySet<string> = new Set(['RunnerReady', 'RunnerRunning']);
/** A runner shutting down or shut down. */
export const STOPPING_STATUSES: ReadonlySet<string> = new Set(['RunnerShuttingDown', 'RunnerShutdown']);
/** Runners that no longer hold the GPU: failed, shutting down or shut down. */
export const GONE_STATUSES: ReadonlySet<string> = new Set(['RunnerFailed', ...STOPPING_STATUSES]);
const SERVING = SERVING_STATUSES;
const STOPPING = STOPPING_STATUSES;

/** True for a runner status (exo's tag) that serves: {@link SERVING_STATUSES}. */
export function isServingStatus(status: string | undefined | null): boolean {
  return status != null && SERVING_STATUSES.has(status);
}

/**
 * An instance's lifecycle in one word, derived from its runners: the one answer the
 * header, the safe-launch plan and progress, the tray, the API and the page give.
 * - loading: on its way to serving (starting, connecting, loading layers, warming up).
 * - restarting: a restart is scheduled after its runner went down (crash, watchdog), or
 *   a relaunch waits for its requests in flight (draining) before it stops and starts.
 * - serving: takes requests now.
 * - stopping: shutting down (Shutdown sent, or the process stopped).
 * - failed: cannot serve until someone acts (or the supervisor's next restart): it
 *   reported RunnerFailed or went down, and its requests have failed.
 */
export const INSTANCE_LIFECYCLES = ['loading', 'restarting', 'serving', 'stopping', 'failed'] as const;
export type InstanceLifecycle = (typeof INSTANCE_LIFECYCLES)[number];

/**
 * A local runner's lifecycle word, from its supervisor's one state and the status the
 * runner reported: the state decides, and a runner that says it failed or is shutting
 * down is never called serving. Every view's words for a local runner come from here.
 */
export function runnerLifecycle(state: RunnerState, status: RunnerStatus): InstanceLifecycle {
  switch (state) {
    case 'ready':
    case 'running':
      if (status.kind === 'RunnerFailed') return 'failed';
      if (STOPPING.has(status.kind)) return 'stopping';
      return 'serving';
    case 'down':
    case 'failed':
    case 'needs_attention':
      return 'failed';
    case 'restarting':
    case 'draining':
      return 'restarting';
    case 'stopping':
    case 'stopped':
      return 'stopping';
    case 'starting':
    case 'loading':
    case 'warming_up':
      return 'loading';
  }
}

/**
 * An exo instance's lifecycle from its runners' statuses: one failed shard fails it,
 * then stopping, then serving when every runner is known and serves; else loading.
 */
export function runnersLifecycle(runners: readonly { status: string; known: boolean }[]): InstanceLifecycle {
  if (runners.some((r) => r.status === 'RunnerFailed')) return 'failed';
  if (runners.some((r) => STOPPING.has(r.status))) return 'stopping';
  return runners.length > 0 && runners.every((r) => r.known && SERVING.has(r.status)) ? 'serving' : 'loading';
}

/** The derived lifecycle state of an instance: {@link runnerLifecycle} for a local one, {@link runnersLifecycle} for an exo one. */
export function instanceLifecycle(instance: InstanceSnapshot): InstanceLifecycle {
  if (instance.source === 'local') return runnerLifecycle(instance.runner.state, instance.runner.status);
  return runnersLifecycle(instance.exo.runners);
}

/**
 * The instances whose state exobar sees now: every local one, and exo's only while exo
 * answers. With exo unreachable its last instances stay on the page (marked as last
 * seen), but no count says they run.
 */
export function instancesSeenNow(snapshot: Pick<Snapshot, 'instances' | 'exo'>): InstanceSnapshot[] {
  if (!exoUnreachable(snapshot)) return snapshot.instances;
  return snapshot.instances.filter((i) => i.source === 'local');
}

/** An exo is attached and does not answer: every glance says "exo unreachable" instead of counting its models. */
export function exoUnreachable(snapshot: Pick<Snapshot, 'exo'>): boolean {
  return snapshot.exo !== null && snapshot.exo !== undefined && !snapshot.exo.connected;
}

/** How many instances are in each lifecycle state (every state present, zero when none). */
export function lifecycleCounts(instances: readonly InstanceSnapshot[]): Record<InstanceLifecycle, number> {
  const counts = Object.fromEntries(INSTANCE_LIFECYCLES.map((s) => [s, 0])) as Record<InstanceLifecycle, number>;
  for (const instance of instances) counts[instanceLifecycle(instance)] += 1;
  return counts;
}

/**
 * True when the instance can take requests now: its lifecycle is serving (for an exo
 * instance every runner of every shard is RunnerReady or RunnerRunning).
 */
export function isServing(instance: InstanceSnapshot): boolean {
  return instanceLifecycle(instance) === 'serving';
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
 * True when the instance cannot serve until someone acts or a restart comes: its
 * lifecycle is failed (a local runner failed, needs attention, went down or reported
 * RunnerFailed; an exo instance with a failed runner). The one definition the tray,
 * the page and the alerts use.
 */
export function isFailed(instance: InstanceSnapshot): boolean {
  return instanceLifecycle(instance) === 'failed';
}

/** True when a local runner is down for good: only the operator's retry brings it back (failed or needs attention). */
export function isDownForGood(instance: InstanceSnapshot): boolean {
  return instance.source === 'local' && (instance.runner.state === 'failed' || instance.runner.state === 'needs_attention');
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
