/**
 * An instance as the pacing controller sees it: its phase on the GPU (InstancePhases),
 * what it still has to prefill, and its supervisor.
 */
import type { Instance } from '../node/instance';
import type { PacedRunner } from './pacing-controller';

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
    supervisor: instance.supervisor,
  };
}
