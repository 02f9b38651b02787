/**
 * A local runner's one lifecycle value and the only transitions allowed between its
 * states. The supervisor writes it through {@link RunnerStateMachine.transition} alone,
 * which checks the table, records the change with its time and reason, and reports it
 * once (one typed event in the node's log); a change the table refuses is counted,
 * recorded and reported too, never silently ignored. Views derive their words from this
 * value (shared/instance-state.ts `runnerLifecycle`) instead of guessing from text.
 */
import type { RunnerState } from '../../../shared/snapshot';
import { StateMachine, type StateChange, type StateListeners } from '../process/state-machine';

/** The states in which a runner process is alive and meant to serve (or on its way to). */
export const UP_STATES: readonly RunnerState[] = ['starting', 'loading', 'warming_up', 'ready', 'running', 'draining'];
/** The start-up steps, before the runner first serves. */
export const STARTUP_STATES: readonly RunnerState[] = ['starting', 'loading', 'warming_up'];

/** From each state, the states it may go to. */
export const RUNNER_TRANSITIONS: Readonly<Record<RunnerState, readonly RunnerState[]>> = {
  stopped: ['starting'],
  starting: ['loading', 'draining', 'down', 'stopping'],
  loading: ['warming_up', 'draining', 'down', 'stopping'],
  warming_up: ['ready', 'draining', 'down', 'stopping'],
  ready: ['running', 'draining', 'down', 'stopping'],
  running: ['ready', 'draining', 'down', 'stopping'],
  // A relaunch drains, then stops; a runner may still die while it drains.
  draining: ['down', 'stopping'],
  // The restart policy decides once the process is gone; a stop may come first.
  down: ['restarting', 'failed', 'needs_attention', 'stopping'],
  restarting: ['starting', 'stopping'],
  // Only an operator's retry (or a relaunch, which stops first) leaves these two.
  failed: ['starting', 'stopping'],
  needs_attention: ['starting', 'stopping'],
  stopping: ['stopped'],
};

/** One transition (accepted or refused): what the `state` and `state_refused` events carry and the history keeps. */
export type RunnerStateChange = StateChange<RunnerState>;

export function canTransition(from: RunnerState, to: RunnerState): boolean {
  return RUNNER_TRANSITIONS[from].includes(to);
}

export type RunnerStateListeners = StateListeners<RunnerState>;

/** The runner's machine: the process kit's one-writer machine over {@link RUNNER_TRANSITIONS}, starting stopped. */
export class RunnerStateMachine extends StateMachine<RunnerState> {
  constructor(listeners: RunnerStateListeners, now: () => number = Date.now) {
    super(RUNNER_TRANSITIONS, 'stopped', listeners, now);
  }
}
