/**
 * One state value with one writer, for any supervised process (a runner, this Mac's
 * exo): every change goes through {@link StateMachine.transition}, which checks it
 * against the table, records it with its time and reason, and reports it once; a change
 * the table refuses is counted, recorded and reported too, never silently ignored.
 * llama-swap's `setState` is the model: one writer, so readers can never disagree.
 */

/** One transition, accepted or refused. */
export interface StateChange<S extends string> {
  from: S;
  to: S;
  /** Why, in words for the event log and the diagnosis. */
  reason: string;
  /** When (epoch ms). */
  at: number;
}

/** From each state, the states it may go to. */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

export interface StateListeners<S extends string> {
  /** Each accepted transition, once. */
  changed(change: StateChange<S>): void;
  /** Each refused one: a bug of the machine's owner, to be logged and shown. */
  refused(change: StateChange<S>): void;
}

/** How many accepted and refused transitions a machine keeps. */
export const STATE_HISTORY = 64;

export class StateMachine<S extends string> {
  private current: S;
  private refusedCount = 0;
  private readonly accepted: StateChange<S>[] = [];
  private readonly refusedList: StateChange<S>[] = [];

  constructor(
    private readonly table: TransitionTable<S>,
    initial: S,
    private readonly listeners: StateListeners<S>,
    private readonly now: () => number = Date.now,
  ) {
    this.current = initial;
  }

  get state(): S {
    return this.current;
  }

  /** Transitions refused because the table does not allow them: a bug if ever non-zero. */
  get refused(): number {
    return this.refusedCount;
  }

  /** The latest accepted transitions, oldest first (at most {@link STATE_HISTORY}). */
  get history(): readonly StateChange<S>[] {
    return this.accepted;
  }

  /** The latest refused transitions, oldest first (at most {@link STATE_HISTORY}). */
  get refusals(): readonly StateChange<S>[] {
    return this.refusedList;
  }

  /** True when the state is one of `states`. */
  in(states: readonly S[]): boolean {
    return states.includes(this.current);
  }

  /** True when the table allows `from` → `to`. */
  allows(from: S, to: S): boolean {
    return this.table[from].includes(to);
  }

  /**
   * Moves to `to` if the table allows it; true when it moved. Staying put is not a
   * transition (and not a refusal).
   */
  transition(to: S, reason: string): boolean {
    const from = this.current;
    if (from === to) return false;
    const change = { from, to, reason, at: this.now() };
    if (!this.allows(from, to)) {
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

function keep<S extends string>(list: StateChange<S>[], change: StateChange<S>): void {
  list.push(change);
  if (list.length > STATE_HISTORY) list.shift();
}
