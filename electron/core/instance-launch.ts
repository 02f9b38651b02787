/**
 * Launching a model, as every caller does it (POST /api/instances, the window's
 * IPC createInstance): a model that already runs answers with its running instance
 * instead of starting a second copy of its weights; a second instance only when the
 * caller asks for one with `duplicate: true`.
 */
import type { CreateInstanceRequestSchema } from '../../shared/api';
import { instanceLifecycle, localInstances, type InstanceLifecycle } from '../../shared/instance-state';
import type { LocalInstanceSnapshot } from '../../shared/snapshot';
import type { z } from 'zod';
import type { FitCheck } from '../../shared/fit-check';
import { gateOnFit, type FitChecker } from './fit/fit-gate';
import { NodeError, type ExobarNode } from './node/node-types';
import { ttlFromSetting } from './on-demand/on-demand-settings';

export type LaunchInstanceRequest = z.output<typeof CreateInstanceRequestSchema>;

export interface LaunchInstanceResult {
  instance: LocalInstanceSnapshot;
  /** True when the model already ran and its instance is answered; nothing was started. */
  reused: boolean;
  /** The instance's lifecycle state now (a reused instance may still be loading). */
  state: InstanceLifecycle;
  /** The fit check the launch passed (or was launched past); null for a reused instance. */
  fit: FitCheck | null;
}

export interface LaunchInstanceOptions {
  /** Replaces the machine's memory readings (tests). */
  fitChecker?: FitChecker;
}

/**
 * The running local instance of `model`, if any: the one a launch reuses. Prefers one
 * that serves over one still loading, so a duplicate started on purpose that is still
 * loading does not hide a serving one.
 */
export function runningInstanceOf(node: Pick<ExobarNode, 'snapshot'>, model: string): LocalInstanceSnapshot | null {
  const same = localInstances(node.snapshot()).filter((i) => i.model === model);
  return same.find((i) => instanceLifecycle(i) === 'serving') ?? same[0] ?? null;
}

/**
 * Launches `request.model`, or answers with its running instance. A running instance of
 * another instance type is not silently reused as the wrong type nor doubled: that is a
 * 409 `model_already_running` that says how to get either. `duplicate: true` always starts
 * a new instance (the node's own checks, the shared-GPU one included, still apply).
 * `pin` and `ttlSeconds` (-1: never) set how the instance stays loaded, a reused one's too.
 */
export async function launchInstance(
  node: Pick<ExobarNode, 'snapshot' | 'createInstance' | 'models' | 'setResidency'>,
  request: LaunchInstanceRequest,
  options: LaunchInstanceOptions = {},
): Promise<LaunchInstanceResult> {
  const { duplicate, acknowledgeMemory, contextTokens, pin, ttlSeconds: ttlSetting, ...create } = request;
  // -1 (never) is null to the node; absent follows the setting.
  const residency = { ...(pin !== undefined ? { pin } : {}), ...(ttlSetting !== undefined ? { ttlSeconds: ttlFromSetting(ttlSetting) } : {}) };
  if (!duplicate) {
    const existing = runningInstanceOf(node, create.model);
    if (existing && existing.instanceType !== create.instanceType) {
      throw new NodeError(
        'model_already_running',
        `${create.model} already runs as a ${existing.instanceType} instance (${existing.id}); ` +
          `stop it first to run it as ${create.instanceType}, or send "duplicate": true to start a second instance beside it`,
        409,
      );
    }
    if (existing) {
      // Launching a running model with `pin` or `ttlSeconds` changes how it stays.
      if (Object.keys(residency).length > 0) node.setResidency(existing.id, residency);
      return { instance: runningInstanceOf(node, create.model) ?? existing, reused: true, state: instanceLifecycle(existing), fit: null };
    }
  }
  // The fit check, before anything starts: a model not in the catalog is the node's own 404.
  const catalog = node.models();
  const model = catalog.find((m) => m.id === create.model);
  const fit = model
    ? await gateOnFit({
        models: [model],
        snapshot: node.snapshot(),
        catalog,
        contextTokens,
        acknowledgeMemory,
        what: create.model,
        checker: options.fitChecker,
      })
    : null;
  // The fit estimate is what the instance holds, for the caps of loads on request.
  const memoryBytes = fit?.models[0]?.neededBytes;
  // The runner's prompt cache gets the cap the fit check counted.
  const promptCacheBytes = fit?.models[0]?.promptCacheBytes;
  const instance = await node.createInstance({
    ...create,
    ...residency,
    ...(memoryBytes !== undefined ? { memoryBytes } : {}),
    ...(promptCacheBytes !== undefined ? { promptCacheBytes } : {}),
  });
  return { instance, reused: false, state: instanceLifecycle(instance), fit };
}
