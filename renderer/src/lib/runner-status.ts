/**
 * How a runner status reads on a card. The names stay exo's (RunnerLoading,
 * RunnerReady, ...) so an operator can match them with exo's logs; the tone picks the
 * status dot's colour.
 */
import type { RunnerStatus } from '../../../shared/runner-protocol';
import type { RequestPhase } from '../../../shared/snapshot';

export type Tone = 'ok' | 'busy' | 'idle' | 'warn' | 'bad';

export function runnerTone(status: RunnerStatus): Tone {
  switch (status.kind) {
    case 'RunnerReady':
      return 'ok';
    case 'RunnerRunning':
      return 'busy';
    case 'RunnerFailed':
      return 'bad';
    case 'RunnerShuttingDown':
    case 'RunnerShutdown':
    case 'RunnerIdle':
      return 'idle';
    default:
      // Connecting, loading, warming up: on the way to ready.
      return 'warn';
  }
}

export const PHASE_LABEL: Record<RequestPhase, string> = {
  queued: 'Queued',
  loading: 'Loading the model',
  awaiting_ack: 'Waiting for acknowledgement',
  prefilling: 'Prefilling',
  decoding: 'Decoding',
  cancelling: 'Cancelling',
};
