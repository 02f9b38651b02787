/**
 * The fit check as a launch gate: a launch whose models do not fit is refused with the
 * figures (NodeError `insufficient_memory`, 409, the check in the error's `fit` field),
 * unless the operator acknowledged the memory risk. Shared by every local launch path.
 */
import type { CatalogModel } from '../../../shared/catalog';
import { localInstances } from '../../../shared/instance-state';
import type { FitCheck } from '../../../shared/fit-check';
import type { Snapshot } from '../../../shared/snapshot';
import { NodeError } from '../node/node-types';
import { fitForLaunch, type FitForLaunchInput } from './fit-for-launch';

/** How a gate reads the machine; tests replace it. */
export type FitChecker = (input: Pick<FitForLaunchInput, 'models' | 'running' | 'contextTokens'>) => Promise<FitCheck>;

export const defaultFitChecker: FitChecker = (input) => fitForLaunch(input);

/**
 * The catalog models of the local instances that hold memory now: every one whose runner
 * has not exited, a stopping one included (its weights stay until its process is gone).
 */
export function runningModels(snapshot: Snapshot, catalog: readonly CatalogModel[]): CatalogModel[] {
  return localInstances(snapshot)
    .filter((i) => i.runner.state !== 'stopped')
    .map((i) => catalog.find((m) => m.id === i.model))
    .filter((m): m is CatalogModel => m !== undefined);
}

/** The error a refused launch throws; the API answers it as 409 with `fit` beside the message. */
export function fitRefusal(fit: FitCheck, what: string): NodeError {
  return new NodeError(
    'insufficient_memory',
    `${what} does not fit: ${fit.problems.join(' ')} Send "acknowledgeMemory": true to launch anyway. ${fit.risk ?? ''}`.trim(),
    409,
    { fit },
  );
}

/**
 * Checks that `models` fit beside what runs; throws {@link fitRefusal} when they do not
 * and `acknowledgeMemory` is false. Returns the check either way (a launch anyway logs it).
 */
export async function gateOnFit(options: {
  models: readonly CatalogModel[];
  snapshot: Snapshot;
  catalog: readonly CatalogModel[];
  contextTokens?: number;
  acknowledgeMemory: boolean;
  what: string;
  checker?: FitChecker;
}): Promise<FitCheck> {
  const fit = await (options.checker ?? defaultFitChecker)({
    models: options.models,
    running: runningModels(options.snapshot, options.catalog),
    contextTokens: options.contextTokens,
  });
  if (!fit.fits && !options.acknowledgeMemory) throw fitRefusal(fit, options.what);
  return fit;
}
