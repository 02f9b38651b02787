/**
 * One proxied chat request's life, as the exo proxy route lives it: one state value,
 * changed only through {@link ProxiedRequestState.to} (the process kit's
 * {@link StateMachine}), which checks the table and refuses and counts a change it does
 * not allow. The route reads its decisions from here; nothing here does I/O.
 *
 * The rule for a request exobar cancelled (POST /v1/cancel/{id}, or the client gone): it
 * ends as cancelled, whichever of exo's stream close and exo's cancel answer arrives
 * first; a stream that ends early and that nobody cancelled stays `exo_stream_incomplete`.
 *
 * An end carries its code from where it happens: a failure its error code, a cancel who
 * asked for it ({@link ProxiedEnd}); the request log and the metrics read these, never
 * the reason's words.
 */
import type { CancelledBy } from '../../../../shared/request-record';
import { StateMachine, type StateChange, type StateListeners, type TransitionTable } from '../../process/state-machine';

/**
 * - `loading`: exobar places the request's model on exo first (`exo.placeOnDemand`).
 * - `waiting`: about to go to exo; `held`: waiting in exobar's hold.
 * - `dispatched`: sent to exo, its answer not begun.
 * - `answering`: exo's whole (non-stream) answer is being read; `streaming`: exo's stream is relayed.
 * - `cancelling`: exobar asked exo to cancel it and waits for the answer.
 * - `done`, `cancelled`, `failed`: ended, as recorded.
 */
export type ProxiedRequestPhase = 'loading' | 'waiting' | 'held' | 'dispatched' | 'answering' | 'streaming' | 'cancelling' | 'done' | 'cancelled' | 'failed';

export type ProxiedOutcome = 'done' | 'cancelled' | 'failed';

const ENDED: readonly ProxiedRequestPhase[] = ['done', 'cancelled', 'failed'];

/** From each state, the states a proxied request may go to. */
export const PROXIED_REQUEST_TRANSITIONS: TransitionTable<ProxiedRequestPhase> = {
  loading: ['waiting', 'cancelled', 'failed'],
  waiting: ['held', 'dispatched', 'cancelled', 'failed'],
  held: ['dispatched', 'cancelled'],
  dispatched: ['answering', 'streaming', 'cancelling', 'cancelled', 'failed'],
  answering: ['cancelling', 'done', 'cancelled', 'failed'],
  streaming: ['cancelling', 'done', 'cancelled', 'failed'],
  // A refused cancel goes back to where the answer is; a whole answer read meanwhile is done.
  cancelling: ['dispatched', 'answering', 'streaming', 'done', 'cancelled', 'failed'],
  done: [],
  cancelled: [],
  failed: [],
};

/** How exo's stream stopped: its clean end, or its connection closed without one. */
export type StreamStop = 'end' | 'close';

/** A failure exobar reports to the client in words and an error code. */
export interface ProxiedFailure {
  code: string;
  message: string;
}

/** How a request ended, as codes: the request log's `errorCode` and `cancelledBy`. */
export interface ProxiedEnd {
  errorCode: string | null;
  cancelledBy: CancelledBy | null;
}

/** The phases a request enters only with a code (through fail and cancel). */
type CodedEnd = 'failed' | 'cancelled';

/** What the relay writes last to the client's stream once the request has ended. */
export type StreamLastWords = { kind: 'cancelled' } | { kind: 'error'; failure: ProxiedFailure } | { kind: 'nothing' };

/** The reason a request cancelled by POST /v1/cancel is recorded with. */
export const CANCELLED_BY_POST = 'cancelled by POST /v1/cancel';

export class ProxiedRequestState {
  private readonly machine: StateMachine<ProxiedRequestPhase>;
  /** What exo's answer began as; kept while cancelling, so a refused cancel goes back to it. */
  private answer: 'whole' | 'stream' | null = null;
  /** exo's stream carried its `[DONE]`. */
  private sawDone = false;
  /** An error exo reported on its stream. */
  private exoError: string | null = null;
  /** The failure exobar reports to the client, when it ended as failed with one. */
  private failureValue: ProxiedFailure | null = null;
  /** The end's codes, set just before the end's transition so its listeners read them. */
  private endValue: ProxiedEnd = { errorCode: null, cancelledBy: null };

  constructor(initial: 'loading' | 'waiting', listeners: StateListeners<ProxiedRequestPhase>, now?: () => number) {
    this.machine = new StateMachine(PROXIED_REQUEST_TRANSITIONS, initial, listeners, now);
  }

  get state(): ProxiedRequestPhase {
    return this.machine.state;
  }

  /** True once the request has ended (done, cancelled or failed). */
  get ended(): boolean {
    return this.machine.in(ENDED);
  }

  /** Transitions refused so far: a bug of the route if ever non-zero. */
  get refused(): number {
    return this.machine.refused;
  }

  get history(): readonly StateChange<ProxiedRequestPhase>[] {
    return this.machine.history;
  }

  /** The failure the client is told of, when the request failed with one. */
  get failure(): ProxiedFailure | null {
    return this.failureValue;
  }

  /** The end's codes (both null until it failed or was cancelled). */
  get end(): ProxiedEnd {
    return this.endValue;
  }

  /** The one way the state changes short of a coded end (see fail and cancel); true when it moved. */
  to(next: Exclude<ProxiedRequestPhase, CodedEnd>, reason: string): boolean {
    return this.machine.transition(next, reason);
  }

  /** Ends as failed, with the failure the client is told of (its code the record's). */
  fail(failure: ProxiedFailure, reason = failure.message): boolean {
    const moved = this.endWith('failed', { errorCode: failure.code, cancelledBy: null }, reason);
    if (moved) this.failureValue = failure;
    return moved;
  }

  /** Ends as failed with `code` when the client already has exo's own answer (its status and body, or its stream's error). */
  failAnswered(code: string, reason: string): boolean {
    return this.endWith('failed', { errorCode: code, cancelledBy: null }, reason);
  }

  /** Ends as cancelled, by whom it says. */
  cancel(by: CancelledBy, reason: string): boolean {
    return this.endWith('cancelled', { errorCode: null, cancelledBy: by }, reason);
  }

  private endWith(next: CodedEnd, end: ProxiedEnd, reason: string): boolean {
    const before = this.endValue;
    this.endValue = end;
    const moved = this.machine.transition(next, reason);
    if (!moved) this.endValue = before;
    return moved;
  }

  /** exo's answer began (its headers came): a whole answer or a stream. Cancelling stays cancelling. */
  answerBegan(kind: 'whole' | 'stream'): void {
    this.answer = kind;
    if (this.state === 'dispatched') this.to(kind === 'whole' ? 'answering' : 'streaming', `exo's ${kind === 'whole' ? 'answer' : 'stream'} began`);
  }

  /** exo answered exobar's cancel: taken, it ended as cancelled; not taken, it goes on where its answer is. */
  cancelAnswered(taken: boolean): void {
    if (this.state !== 'cancelling') return;
    if (taken) this.cancel('cancel_api', CANCELLED_BY_POST);
    else this.to(this.answer === 'stream' ? 'streaming' : this.answer === 'whole' ? 'answering' : 'dispatched', 'exo did not take the cancel');
  }

  /** exo's stream said `[DONE]`. */
  sawStreamDone(): void {
    this.sawDone = true;
  }

  /** exo's stream reported an error. */
  sawStreamError(message: string): void {
    this.exoError = message;
  }

  /**
   * exo's stream stopped: ends the request if it has not ended (cancelled when exobar
   * cancelled it, whichever came first), and says what the client reads last.
   */
  streamStopped(stop: StreamStop, incomplete: ProxiedFailure, lost: ProxiedFailure): StreamLastWords {
    if (!this.ended) {
      const failure = stop === 'end' ? (this.sawDone ? null : incomplete) : lost;
      if (this.state === 'cancelling' && !this.exoError) this.cancel('cancel_api', CANCELLED_BY_POST);
      else if (failure) this.fail(failure);
      else if (this.exoError) this.failAnswered('exo_reported_error', `exo reported: ${this.exoError}`);
      else this.to('done', "exo's stream ended with [DONE]");
    }
    if (this.state === 'cancelled') return this.sawDone || this.exoError ? { kind: 'nothing' } : { kind: 'cancelled' };
    if (this.state === 'failed' && this.failureValue) return { kind: 'error', failure: this.failureValue };
    return { kind: 'nothing' };
  }
}
