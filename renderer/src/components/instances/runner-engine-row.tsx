import { promptCacheWords, type RunnerEngineSnapshot } from '../../../../shared/runner-engine-view';

const SCHEDULE_HINTS: Record<RunnerEngineSnapshot['schedule'], string> = {
  interleaved: 'runner.schedule interleaved: waiting requests join at the next step and a long prompt is prefilled in short chunks between decode steps, so other streams keep flowing',
  exo: "runner.schedule exo: exo's runner step for step, one request admitted per step with its whole prefill (other streams pause meanwhile)",
};

const SIM_PROFILE_HINT =
  "runner.simProfile: this sim runner takes the MLX runner's own timings measured on a tiny real model on the CPU (npm run calibrate-sim), not its catalog model's";

/**
 * How this model's runner serves (docs/runner-protocol.md, "Schedules" and "Prompt cache"):
 * its schedule, a sim's timing profile when one is set, and its prompt cache's size against its cap and hit rate, or why this
 * model has none.
 */
export function RunnerEngineRow({ engine }: { engine: RunnerEngineSnapshot }) {
  const cache = engine.promptCache;
  const refused = cache !== null && !cache.supported;
  return (
    <div className="row runner-engine" data-testid="runner-engine">
      <span className="badge explained" title={SCHEDULE_HINTS[engine.schedule]}>
        {engine.schedule}
      </span>
      {engine.simProfile !== null && (
        <span className="badge explained" data-testid="sim-profile" title={SIM_PROFILE_HINT}>
          sim profile {engine.simProfile}
        </span>
      )}
      <span className={refused ? 'warn-text' : 'muted'} data-testid="prompt-cache">
        {promptCacheWords(cache)}
      </span>
    </div>
  );
}
