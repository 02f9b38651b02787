/**
 * A local runner's state as the supervisor sees it, and the only transitions allowed
 * between states. Every change goes through {@link RunnerStateMachine.transition}, which
 * refuses anything not in the table and reports each accepted change once (one typed
 * event in the node's log), so views read the state instead of guessing it from text.
 */
import type { RunnerState } from '../../../shared/snapshot';

/** From each state, the states it may go to. */
export const RUNNER_TRANSITIONS: Readonly<Record<RunnerState, readonly RunnerState[]>> = {
  stopped: ['starting'],
  starting: ['loading', 'restarting', 'failed', 'needs_attention', 'stopped'],
  loading: ['warming_up', 'restarting', 'failed', 'needs_attention', 'stopped'],
  warming_up: ['ready', 'restarting', 'failed', 'needs_attention', 'stopped'],
  ready: ['running', 'restarting', 'failed', 'needs_attention', 'stopped'],
  running: ['ready', 'restarting', 'failed', 'needs_attention', 'stopped'],
  restarting: ['starting', 'failed', 'stopped'],
  // Only an operator's retry (or a relaunch) leaves these two.
  failed: ['starting', 'stopped'],
  needs_attention: ['starting', 'stopped'],
};

export interface RunnerStateChange {
  from: RunnerState;
  to: RunnerState;
  /** Why, in words for the event log and the diagnosis. */
  reason: string;
}

export function canTransition(from: RunnerState, to: RunnerState): boolean {
  return RUNNER_TRANSITIONS[from].includes(to);
}

export class RunnerStateMachine {
  private current: RunnerState = 'stopped';
  /** Transitions refused because the table does not allow them: a supervisor bug if ever non-zero. */
  refused = 0;

  constructor(private readonly onChange: (change: RunnerStateChange) => void) {}

  get state(): RunnerState {
    return this.current;
  }

  /** Moves to `to` if the table allows it; true when it moved. Staying put is not a transition. */
  transition(to: RunnerState, reason: string): boolean {
    const from = this.current;
    if (from === to) return false;
    if (!canTransition(from, to)) {
      this.refused += 1;
      return false;
    }
    this.current = to;
    this.onChange({ from, to, reason });
    return true;
  }
}
