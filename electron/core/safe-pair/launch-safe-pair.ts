/**
 * Carries out a safe pair plan (shared/safe-pair-plan.ts) against a node: the two
 * models as ring instances with fast synch off, one after the other, each waiting for
 * its runner to be ready, its progress reported (the snapshot's `launch`, launch-section.ts).
 *
 * Sequential on purpose: creating, connecting, loading and warming up a runner are the
 * lifecycle steps that legitimately wait (docs/domain.md, "Why a model stalls while another is busy"), and loading
 * two models at once would only make both slower and the progress harder to read.
 */
import type { SafePairPlan } from '../../../shared/api';
import { localInstances } from '../../../shared/instance-state';
import type { LaunchProgress, LocalInstanceSnapshot } from '../../../shared/snapshot';
import { NodeError, type ExobarNode } from '../node/node-types';
import { launchStepText } from './launch-progress-step';

/** The part of the node the launch uses (the real node satisfies it; tests pass a small fake). */
export type SafePairNode = Pick<ExobarNode, 'snapshot' | 'createInstance' | 'waitForReady' | 'deleteInstance' | 'setResidency'>;

export interface SafePairLaunchOptions {
  /** Deadline for each runner to become ready; the node's default when omitted. */
  readyTimeoutMs?: number;
  /** How often the snapshot is read for loading progress while waiting (default 100 ms). */
  pollMs?: number;
  /** Where the progress goes, each change once (the core's launch section); absent: nowhere. */
  onProgress?: (progress: LaunchProgress) => void;
}

export interface SafePairLaunchResult {
  instances: Array<{ model: string; instanceId: string; reused: boolean }>;
}

/** One launch per node at a time; a second call joins the one under way. */
const running = new WeakMap<SafePairNode, Promise<SafePairLaunchResult>>();

/** The launch under way on this node, if any (the API can say "already launching"). */
export function currentSafePairLaunch(node: SafePairNode): Promise<SafePairLaunchResult> | null {
  return running.get(node) ?? null;
}

/**
 * Launches the plan's models. Idempotent: a model that already has a ring instance on
 * the node is reused (waited for, never started twice), and a call made while a launch
 * runs joins it and gets its result. Refuses a plan with blockers (NodeError
 * `launch_failed`, 409). A failure part way sets the progress to `failed` with the
 * error, deletes the instance it was starting (no orphan runner) and leaves instances
 * that existed before untouched; the returned promise then rejects with a NodeError
 * `launch_failed` carrying the cause's HTTP status (500 when the cause had none).
 */
export function launchSafePair(node: SafePairNode, plan: SafePairPlan, options: SafePairLaunchOptions = {}): Promise<SafePairLaunchResult> {
  const underway = running.get(node);
  if (underway) return underway;
  if (!plan.canRun || plan.blockers.length > 0) {
    return Promise.reject(new NodeError('launch_failed', `The safe pair cannot run: ${plan.blockers.join(' ') || 'the plan is marked as not runnable.'}`, 409));
  }
  const launch = runLaunch(node, plan, options).finally(() => running.delete(node));
  running.set(node, launch);
  return launch;
}

async function runLaunch(node: SafePairNode, plan: SafePairPlan, options: SafePairLaunchOptions): Promise<SafePairLaunchResult> {
  const models = plan.models.map((m) => m.model);
  const progress: LaunchProgress = { state: 'running', step: 'Starting the safe pair', models, current: 0, error: null, startedAt: Date.now() };
  const report = (change: Partial<LaunchProgress>): void => {
    const next = { ...progress, ...change };
    if (next.step === progress.step && next.state === progress.state && next.current === progress.current && next.error === progress.error) return;
    Object.assign(progress, next);
    options.onProgress?.({ ...progress, models: [...models] });
  };
  options.onProgress?.({ ...progress, models: [...models] });

  const result: SafePairLaunchResult = { instances: [] };
  for (const [index, entry] of plan.models.entries()) {
    const model = entry.model;
    // Looked up now, not from the plan: the plan may be older than the node's state.
    const existing = findRingInstance(node, model);
    let instanceId = existing?.id ?? null;
    const reused = existing !== null;
    report({ current: index, step: launchStepText(model, existing?.runner.status ?? null, reused) });
    try {
      // Pinned: the safe pair stays loaded, never unloaded when idle nor evicted to make room.
      if (instanceId) node.setResidency(instanceId, { pin: true });
      else {
        const created = await node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false, pin: true });
        instanceId = created.id;
        // The node decides with its own default; if that would put fast synch on where the
        // plan promised off (settings changed since the node started), stop: two ring
        // runners with fast synch on is the hazard this launch exists to avoid.
        if (created.fastSynch.enabled && !entry.fastSynch) {
          throw new Error(`the node would run ${model} with fast synch on (${created.fastSynch.reason}), but the plan needs it off`);
        }
      }
      await waitWithProgress(node, instanceId, model, reused, options, (step) => report({ step }));
      result.instances.push({ model, instanceId, reused });
    } catch (err) {
      const cause = err instanceof Error ? err.message : String(err);
      let message = reused
        ? `Safe pair launch failed: the running instance of ${model} did not become ready: ${cause}`
        : `Safe pair launch failed while starting ${model}: ${cause}`;
      if (instanceId && !reused) {
        // No orphan runner: the instance this launch created goes away with its process.
        await node.deleteInstance(instanceId).catch((deleteErr: unknown) => {
          message += ` (removing its instance also failed: ${deleteErr instanceof Error ? deleteErr.message : String(deleteErr)})`;
        });
      }
      report({ state: 'failed', step: `Failed at ${model}`, error: message });
      // Keep the cause's status: a refusal (409 fast_synch_shared_gpu, 404 model) stays a
      // client error, a runner failure or timeout stays a 5xx.
      throw new NodeError('launch_failed', message, err instanceof NodeError ? err.status : 500);
    }
  }
  const allReused = result.instances.every((i) => i.reused);
  report({
    state: 'done',
    current: Math.max(0, models.length - 1),
    step: allReused ? `Already running: ${models.join(' and ')}` : `Ready: ${models.join(' and ')}`,
  });
  return result;
}

function findRingInstance(node: SafePairNode, model: string): LocalInstanceSnapshot | null {
  return localInstances(node.snapshot()).find((i) => i.model === model && i.instanceType === 'ring') ?? null;
}

/** Waits for the runner while reading its loading progress from the snapshot. */
async function waitWithProgress(
  node: SafePairNode,
  instanceId: string,
  model: string,
  reused: boolean,
  options: SafePairLaunchOptions,
  onStep: (step: string) => void,
): Promise<void> {
  const poll = (): void => {
    const instance = localInstances(node.snapshot()).find((i) => i.id === instanceId);
    if (instance) onStep(launchStepText(model, instance.runner.status, reused));
  };
  poll();
  const timer = setInterval(poll, options.pollMs ?? 100);
  try {
    await node.waitForReady(instanceId, options.readyTimeoutMs);
  } finally {
    clearInterval(timer);
  }
  poll();
}
