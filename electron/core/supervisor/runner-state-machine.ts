/**
 * A local runner's one lifecycle value and the only transitions allowed between its
 * states. The supervisor writes it through {@link RunnerStateMachine.transition} alone,
 * which checks the table, records the change with its time and reason, and reports it
 * once (one typed event in the node's log); a change the table refuses is counted,
 * recorded and reported too, never silently ignored. Views derive their words from this
 * value (shared/instance-state.ts `runnerLifecycle`) instead of guessing from text.
 */
import type { RunnerState } from '../../../shared/snapshot';

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

/** One accepted transition: what the `state` event carries and the history keeps. */
export interface RunnerStateChange {
  from: RunnerState;
  to: RunnerState;
  /** Why, in words for the event log and the diagnosis. */
  reason: string;
  /** When (epoch ms). */
  at: number;
}

export function canTransition(from: RunnerState, to: RunnerState): boolean {
  return RUNNER_TRANSITIONS[from].includes(to);
}

/** How many accepted and refused transitions the machine keeps for the bundle. */
const HISTORY = 64;

export interface RunnerStateListeners {
  /** Each accepted transition, once. */
  changed(change: RunnerStateChange): void;
  /** Each refused one: a supervisor bug, shown in the log and the bundle. */
  refused(change: RunnerStateChange): void;
}

export class RunnerStateMachine {
  private current: RunnerState = 'stopped';
  private refusedCount = 0;
  private readonly accepted: RunnerStateChange[] = [];
  private readonly refusedList: RunnerStateChange[] = [];

  constructor(
    private readonly listeners: RunnerStateListeners,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): RunnerState {
    return this.current;
  }

  /** Transitions refused because the table does not allow them: a supervisor bug if ever non-zero. */
  get refused(): number {
    return this.refusedCount;
  }

  /** The latest accepted transitions, oldest first (at most 64). */
  get history(): readonly RunnerStateChange[] {
    return this.accepted;
  }

  /** The latest refused transitions, oldest first (at most 64). */
  get refusals(): readonly RunnerStateChange[] {
    return this.refusedList;
  }

  /** True when the state is one of `states`. */
  in(states: readonly RunnerState[]): boolean {
    return states.includes(this.current);
  }

  /**
   * Moves to `to` if the table allows it; true when it moved. Staying put is not a
   * transition (and not a refusal).
   */
  transition(to: RunnerState, reason: string): boolean {
    const from = this.current;
    if (from === to) return false;
    const change = { from, to, reason, at: this.now() };
    if (!canTransition(from, to)) {
      this.refusedCount += 1;
      keep(this.refusedList, change);
      this.listeners.refused(change);
      return false;
    }
    this.current = to;
    keep(this.accepted, change);
    this.listeners.changed(change);
    return true;
  }
}

function keep(list: RunnerStateChange[], change: RunnerStateChange): void {
  list.push(change);
  if (list.length > HISTORY) list.shift();
}
