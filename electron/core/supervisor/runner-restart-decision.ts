/**
 * What happens to a runner that went down, by cause: the supervisor's restart policy as
 * a pure function. A start-up failure that would repeat fails for good; a stuck runner
 * that survived SIGKILL, or was stuck with fast synch on, may have wedged the GPU and
 * needs the operator; a crash (or a stuck runner safely gone) restarts with backoff
 * until the failure cap within the window (the process kit's restart policy).
 */
import type { DownCause } from '../../../shared/instance-vocabulary';
import type { RunnerState } from '../../../shared/snapshot';
import { restartVerdict, type RestartLimits } from '../process/restart-policy';

/** Why a runner went down (shared/instance-vocabulary.ts); decides the error its in-flight requests get. */
export type { DownCause };

export interface RestartPolicy extends RestartLimits {
  /** The window the failures (crash or stuck) are counted in (default 10 minutes), whatever succeeded between them. */
  windowMs?: number;
}

export const DEFAULT_FAILURE_WINDOW_MS = 10 * 60_000;
/** What a stuck runner that may have wedged the GPU asks of the operator. */
export const WEDGED_GPU_ADVICE = 'the GPU may be wedged: quit exobar, and reboot if models stay stuck';

export interface RunnerDown {
  cause: DownCause;
  /** False when the process outlived SIGKILL. */
  died: boolean;
  /** Whether the runner ran with fast synch on (its hello's word, else the policy's). */
  fastSynch: boolean;
}

/** Where the runner goes from down, the restart's delay (null: none), and what the operator is told. */
export interface RunnerDownDecision {
  to: Extract<RunnerState, 'restarting' | 'failed' | 'needs_attention'>;
  delay: number | null;
  attention: string | null;
}

/**
 * Decides by cause. `countFailure` records this failure and returns how many count now
 * (it is called only for the causes that count: crash, and stuck when safely gone).
 */
export function decideAfterDown(down: RunnerDown, countFailure: () => number, policy: RestartPolicy): RunnerDownDecision {
  if (down.cause === 'startup_failed' || down.cause === 'fast_synch_mismatch') {
    return { to: 'failed', delay: null, attention: 'the runner cannot start as it is: fix what its message names, then retry' };
  }
  if (down.cause === 'stuck' && !down.died) {
    return { to: 'needs_attention', delay: null, attention: `the stuck runner survived SIGKILL: ${WEDGED_GPU_ADVICE}` };
  }
  if (down.cause === 'stuck' && down.fastSynch) {
    return { to: 'needs_attention', delay: null, attention: `the runner was stuck with fast synch on: ${WEDGED_GPU_ADVICE}` };
  }
  const verdict = restartVerdict(countFailure(), policy);
  if (!verdict.restart) {
    const minutes = Math.round((policy.windowMs ?? DEFAULT_FAILURE_WINDOW_MS) / 60_000);
    return { to: 'failed', delay: null, attention: `${verdict.failures} failures within ${minutes} min: not restarted again; see its logs, then retry` };
  }
  return { to: 'restarting', delay: verdict.delayMs, attention: null };
}
