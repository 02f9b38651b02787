/** Questions every view asks of an instance in the snapshot, answered once. */
import type { InstanceSnapshot } from './snapshot';

/** True when the runner can take requests now (exo's RunnerReady or RunnerRunning). */
export function isServing(instance: InstanceSnapshot): boolean {
  return instance.runner.status.kind === 'RunnerReady' || instance.runner.status.kind === 'RunnerRunning';
}
