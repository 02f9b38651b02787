/**
 * One way to start, stop and restart this Mac's exo on the operator's word, for the
 * control API and the app's IPC alike: the fast-synch plan for what this Mac runs,
 * the instances a restart deletes, and a refusal told apart from work under way.
 */
import type { ExoFastSynchPlan } from '../../../shared/exo-fast-synch';
import type { ExoProcessState } from '../../../shared/exo-process';
import { ExoProcessControlSchema, type ExoProcessControl } from '../../../shared/exo-process-control';
import type { FastSynchOverride, Snapshot } from '../../../shared/snapshot';
import type { ExoProcessManager } from './exo-process-manager';
import { thisMacExoInstances } from './this-mac-instances';

export interface ExoControlContext {
  manager: ExoProcessManager;
  /** The snapshot now: the exo instances with a shard on this Mac. */
  snapshot: () => Pick<Snapshot, 'instances'>;
  /** The override when a start names none (the settings' `defaultFastSynch`). */
  defaultFastSynch: () => FastSynchOverride;
}

/**
 * Starts the action; resolves once it has ended (exo running, failed or stopped).
 * Rejects with `ExoProcessError` (`exo_restart_required` without consent,
 * `fast_synch_shared_gpu` for an unacknowledged risky override) before anything happens.
 */
export function controlExoProcess(context: ExoControlContext, input: ExoProcessControl): Promise<ExoProcessState> {
  const request = ExoProcessControlSchema.parse(input);
  const { manager } = context;
  const thisMac = () => thisMacExoInstances(context.snapshot(), manager.state().nodeId);
  const plan = (override: FastSynchOverride, acknowledgeRisk: boolean): ExoFastSynchPlan => ({ instances: thisMac(), override, acknowledgeRisk });
  switch (request.action) {
    case 'start':
      return manager.start(plan(request.fastSynch ?? context.defaultFastSynch(), request.acknowledgeRisk));
    case 'stop':
      return manager.stop();
    case 'restart':
      return manager.restart({
        consent: request.consent,
        plan: request.fastSynch === undefined ? undefined : plan(request.fastSynch, request.acknowledgeRisk),
        spanningInstances: thisMac().map(({ id, model }) => ({ id, model })),
      });
  }
}

/**
 * Waits only as long as a refusal takes: the manager throws it before its first wait,
 * so it has settled by the next turn of the event loop. Resolves with the outcome when
 * the work is already done, null while it goes on (its outcome is in the snapshot),
 * and rejects with the refusal.
 */
export async function refusalOrUnderWay(work: Promise<ExoProcessState>): Promise<ExoProcessState | null> {
  return Promise.race([work, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
}
