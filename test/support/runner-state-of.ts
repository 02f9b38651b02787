/**
 * The supervisor's runner state for an exo runner status, as a real node shows it while
 * a runner starts and serves: fixtures that set a status set the matching state with it,
 * so no fixture shows a pairing production never emits.
 */
import type { RunnerStatus } from '../../shared/runner-protocol';
import type { RunnerState } from '../../shared/snapshot';

export function stateOf(status: RunnerStatus): RunnerState {
  switch (status.kind) {
    case 'RunnerLoading':
    case 'RunnerLoaded':
      return 'loading';
    case 'RunnerWarmingUp':
      return 'warming_up';
    case 'RunnerReady':
      return 'ready';
    case 'RunnerRunning':
      return 'running';
    case 'RunnerFailed':
      return 'failed';
    case 'RunnerShuttingDown':
      return 'stopping';
    case 'RunnerShutdown':
      return 'stopped';
    default:
      return 'starting';
  }
}
