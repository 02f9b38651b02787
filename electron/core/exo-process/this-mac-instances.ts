/**
 * The exo instances with a shard on this Mac, read from the snapshot: what a restart
 * of this Mac's exo deletes (exo's master drops instances whose node left), and what
 * the fast-synch decision is made for.
 */
import type { ExoPlannedInstance } from '../../../shared/exo-fast-synch';
import { exoInstances } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';

/**
 * The attached cluster's instances that have a runner on the node `nodeId` (this Mac's
 * exo, as its `/node_id` said), each with the number of Macs it spans; empty when the
 * node id is not known yet or no cluster is attached.
 */
export function thisMacExoInstances(snapshot: Pick<Snapshot, 'instances'>, nodeId: string | null): ExoPlannedInstance[] {
  if (!nodeId) return [];
  return exoInstances(snapshot)
    .filter((instance) => instance.exo.runners.some((runner) => runner.nodeId === nodeId))
    .map((instance) => ({
      id: instance.id,
      model: instance.model,
      instanceType: instance.instanceType,
      nodeCount: new Set(instance.exo.runners.map((runner) => runner.nodeId)).size,
    }));
}
