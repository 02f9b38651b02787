/**
 * Builds the safe pair plan from a live node: its catalog, the instances in its
 * snapshot and the free memory the OS reports. What GET /api/launch/safe-pair answers.
 */
import type { SafePairPlan, Settings } from '../../../shared/api';
import { MEMORY_BLOCKER, planSafePair, type RunningInstanceInfo } from '../../../shared/safe-pair-plan';
import { instanceLifecycle, localInstances } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';
import type { ExobarNode } from '../node/node-types';
import type { FitCheck } from '../../../shared/fit-check';
import { fitForLaunch } from '../fit/fit-for-launch';
import { runningModels, type FitChecker } from '../fit/fit-gate';
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
  /** Replaces the fit check's readings (tests); by default it reads the same memory and the GPU's wired limit. */
  fitChecker?: FitChecker;
}

/**
 * The plan with its memory judged by the fit check (weights plus KV cache, and the GPU
 * limit) instead of the catalog figures alone: the planner's own memory blocker gives
 * way to the check's problems, and the plan's figures become the check's (each model's
 * need, the total, free memory and headroom), so one answer never says two needs.
 */
export function withFit(plan: SafePairPlan, fit: FitCheck): SafePairPlan {
  const blockers = plan.blockers.filter((b) => !b.startsWith(MEMORY_BLOCKER));
  if (!fit.fits) blockers.push(...fit.problems);
  const models = plan.models.map((m) => {
    const estimate = m.alreadyRunning ? undefined : fit.models.find((e) => e.model === m.model);
    return estimate ? { ...m, memoryBytes: estimate.neededBytes } : m;
  });
  const memory = { ...plan.memory, requiredBytes: fit.neededBytes, freeBytes: fit.freeBytes, headroomBytes: fit.headroomBytes };
  return { ...plan, models, memory, blockers, canRun: blockers.length === 0, fit };
}

/** The plan as launched anyway: the fit check's problems no longer block it. */
export function acknowledgingMemory<P extends SafePairPlan>(plan: P): P {
  const problems = new Set(plan.fit?.problems ?? []);
  const blockers = plan.blockers.filter((b) => !problems.has(b));
  return { ...plan, blockers, canRun: blockers.length === 0 };
}

/** Plans the safe pair for this node right now; does nothing else. */
export async function planSafePairForNode(
  node: Pick<ExobarNode, 'models' | 'snapshot'>,
  settings: Settings,
  options: PlanForNodeOptions = {},
): Promise<SafePairPlan> {
  const readMemory = options.readMemory ?? (() => readSystemMemory());
  const memory = await readMemory();
  const catalog = node.models();
  const snapshot = node.snapshot();
  const plan = planSafePair({
    catalog,
    settings,
    running: runningInstancesFromSnapshot(snapshot),
    freeMemoryBytes: memory.freeBytes,
    headroomBytes: options.headroomBytes,
  });
  const toStart = plan.models
    .filter((m) => !m.alreadyRunning)
    .map((m) => catalog.find((c) => c.id === m.model))
    .filter((m) => m !== undefined);
  const checker: FitChecker =
    options.fitChecker ?? ((input) => fitForLaunch({ ...input, headroomBytes: options.headroomBytes, readMemory: async () => memory }));
  return withFit(plan, await checker({ models: toStart, running: runningModels(snapshot, catalog) }));
}
