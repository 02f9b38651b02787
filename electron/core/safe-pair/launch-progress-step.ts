/**
 * The words shown for one step of the safe launch, from the runner status the
 * snapshot reports (exo's lifecycle names: connecting, loading with layer counts,
 * warming up, ready).
 */
import { isServingStatus } from '../../../shared/instance-state';
import type { RunnerStatus } from '../../../shared/runner-protocol';

/** "Loading sim/llama-3.2-3b (12/28 layers)", "Warming up sim/llama-3.2-1b", ... */
export function launchStepText(model: string, status: RunnerStatus | null, reused: boolean): string {
  if (status === null) return reused ? `Waiting for ${model} (already running)` : `Starting ${model}`;
  // Which statuses serve is the serving rule's (shared/instance-state.ts), never a case here.
  if (isServingStatus(status.kind)) return `${model} ready`;
  switch (status.kind) {
    case 'RunnerIdle':
      return `Starting ${model}`;
    case 'RunnerConnecting':
    case 'RunnerConnected':
      return `Connecting to ${model}`;
    case 'RunnerLoading':
      return `Loading ${model} (${status.layersLoaded}/${status.totalLayers} layers)`;
    case 'RunnerLoaded':
    case 'RunnerWarmingUp':
      return `Warming up ${model}`;
    case 'RunnerShuttingDown':
    case 'RunnerShutdown':
      return `${model} is shutting down`;
    case 'RunnerFailed':
      return `${model} failed: ${status.errorMessage}`;
  }
  return `${model}: ${status.kind}`;
}
