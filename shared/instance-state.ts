/** Questions every view asks of an instance in the snapshot, answered once. */
import type { ExoInstanceSnapshot, InstanceSnapshot, LocalInstanceSnapshot, Snapshot } from './snapshot';

const SERVING = new Set(['RunnerReady', 'RunnerRunning']);

/**
 * True when the instance can take requests now (exo's RunnerReady or RunnerRunning):
 * for a local instance its one runner; for an exo instance every runner of every shard.
 */
export function isServing(instance: InstanceSnapshot): boolean {
  if (instance.source === 'local') return SERVING.has(instance.runner.status.kind);
  return instance.exo.runners.length > 0 && instance.exo.runners.every((r) => r.known && SERVING.has(r.status));
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
  if (instance.source === 'local') return instance.runner.status.kind === 'RunnerFailed';
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
