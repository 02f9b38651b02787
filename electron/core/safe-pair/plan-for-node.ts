/**
 * Builds the safe pair plan from a live node: its catalog, the instances in its
 * snapshot and the free memory the OS reports. What GET /api/launch/safe-pair answers.
 */
import type { SafePairPlan, Settings } from '../../../shared/api';
import { planSafePair, type RunningInstanceInfo } from '../../../shared/safe-pair-plan';
import { instanceLifecycle, localInstances } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';
import type { ExobarNode } from '../node-types';
import { readSystemMemory, type SystemMemory } from '../system-memory';

/**
 * The node's instances as the planner sees them. Every instance counts, whatever its
 * runner's state: one that is still loading or restarting is reused by the launch,
 * not started a second time. The plan launches local runners, so it counts the local
 * instances (an attached exo's are planned by exo).
 */
export function runningInstancesFromSnapshot(snapshot: Snapshot): RunningInstanceInfo[] {
  return localInstances(snapshot).map((i) => ({
    id: i.id,
    model: i.model,
    instanceType: i.instanceType,
    fastSynch: i.fastSynch.enabled,
    fastSynchReason: i.fastSynch.reason,
    state: instanceLifecycle(i),
  }));
}

export interface PlanForNodeOptions {
  /** Replaces the OS reading (tests, or a caller that already has one). */
  readMemory?: () => Promise<SystemMemory>;
  headroomBytes?: number;
}

/** Plans the safe pair for this node right now; does nothing else. */
export async function planSafePairForNode(
  node: Pick<ExobarNode, 'models' | 'snapshot'>,
  settings: Settings,
  options: PlanForNodeOptions = {},
): Promise<SafePairPlan> {
  const memory = await (options.readMemory ?? (() => readSystemMemory()))();
  return planSafePair({
    catalog: node.models(),
    settings,
    running: runningInstancesFromSnapshot(node.snapshot()),
    freeMemoryBytes: memory.freeBytes,
    headroomBytes: options.headroomBytes,
  });
}
