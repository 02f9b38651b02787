/**
 * An instance as the pacing controller sees it: its phase on the GPU (InstancePhases),
 * what it still has to prefill, and its supervisor.
 */
import type { Instance } from './instance';
import type { PacedRunner } from '../pacing/pacing-controller';
import { UNKNOWN_MODEL_PRIOR } from '../supervisor/runner-rates';

/** The controller's view of one local instance. */
export function pacedRunnerOf(instance: Instance): PacedRunner {
  return {
    id: instance.id,
    label: instance.model.name,
    phase: () => instance.phases.phase,
    onPhaseChange: (listener) => instance.phases.onChange(() => listener()),
    prefillRemainingTokens: () => {
      let tokens = 0;
      for (const request of instance.live) {
        if (request.acknowledgedAt !== null && request.firstTokenAt === null) tokens += Math.max(0, request.promptTokens - request.prefillProcessed);
      }
      return tokens;
    },
    soloItl: () => instance.sharing.soloFigures(performance.now()),
    // The catalog's calibrated decode step (scaled for a sim); none for a model outside it.
    calibratedItlMs: () => (instance.supervisor.rates.prior === UNKNOWN_MODEL_PRIOR ? null : instance.supervisor.rates.prior.decodeStepMs),
    supervisor: instance.supervisor,
  };
}
