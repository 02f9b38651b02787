import { describe, expect, it } from 'vitest';
import type { StateChange } from '../../process/state-machine';
import { CANCELLED_BY_POST, PROXIED_REQUEST_TRANSITIONS, ProxiedRequestState, type ProxiedRequestPhase } from './proxied-request-state';

const INCOMPLETE = { code: 'exo_stream_incomplete', message: 'ended without [DONE]' };
const LOST = { code: 'exo_connection_lost', message: 'closed mid-stream' };

function life(initial: 'loading' | 'waiting' = 'waiting') {
  const changed: StateChange<ProxiedRequestPhase>[] = [];
  const refused: StateChange<ProxiedRequestPhase>[] = [];
  const state = new ProxiedRequestState(initial, { changed: (c) => changed.push(c), refused: (c) => refused.push(c) }, () => 1);
  /** The states visited, the initial one first. */
  const path = () => [initial, ...changed.map((c) => c.to)];
  return { state, changed, refused, path };
}

/** A stream that has begun at exo. */
function streaming() {
  const l = life();
  l.state.to('dispatched', 'sent to exo');
  l.state.answerBegan('stream');
  return l;
}

describe('a proxied request, as whole transition sequences', () => {
  it("normal stream: waiting, dispatched, streaming, done; nothing written after exo's [DONE]", () => {
    const l = streaming();
    l.state.sawStreamDone();
    expect(l.state.streamStopped('end', INCOMPLETE, LOST)).toEqual({ kind: 'nothing' });
    // exo's close after its end changes nothing.
    expect(l.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'nothing' });
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'done']);
    expect(l.refused).toEqual([]);
  });

  it('normal whole answer: waiting, dispatched, answering, done', () => {
    const l = life();
    l.state.to('dispatched', 'sent');
    l.state.answerBegan('whole');
    l.state.to('done', 'read');
    expect(l.path()).toEqual(['waiting', 'dispatched', 'answering', 'done']);
    expect(l.state.ended).toBe(true);
    expect(l.refused).toEqual([]);
  });

  it('held, then sent: waiting, held, dispatched; placed on demand first: loading, waiting', () => {
    const l = life('loading');
    l.state.to('waiting', 'placed');
    l.state.to('held', 'hold');
    l.state.to('dispatched', 'released');
    expect(l.path()).toEqual(['loading', 'waiting', 'held', 'dispatched']);
    expect(l.refused).toEqual([]);
  });

  it('cancel while held (or before the first token, no command id): ends cancelled at once', () => {
    const held = life();
    held.state.to('held', 'hold');
    held.state.cancel('cancel_api', 'cancelled by POST /v1/cancel while held by exobar');
    expect(held.path()).toEqual(['waiting', 'held', 'cancelled']);
    const early = streaming();
    early.state.cancel('cancel_api', `${CANCELLED_BY_POST} (connection to exo closed)`);
    // exo's connection then closes: the client reads the cancelled ending, not an error.
    expect(early.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'cancelled' });
    expect(early.path()).toEqual(['waiting', 'dispatched', 'streaming', 'cancelled']);
    expect([...held.refused, ...early.refused]).toEqual([]);
  });

  it('cancel after the first token, exo closes the stream before it answers the cancel: cancelled, with the cancelled ending', () => {
    const l = streaming();
    l.state.to('cancelling', 'asking exo');
    expect(l.state.streamStopped('end', INCOMPLETE, LOST)).toEqual({ kind: 'cancelled' });
    expect(l.state.state).toBe('cancelled');
    expect(l.changed.at(-1)!.reason).toBe(CANCELLED_BY_POST);
    l.state.cancelAnswered(true); // the answer, delayed, changes nothing
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'cancelling', 'cancelled']);
    expect(l.refused).toEqual([]);
  });

  it('cancel after the first token, exo answers before its stream closes: cancelled, then the cancelled ending at the close', () => {
    const l = streaming();
    l.state.to('cancelling', 'asking exo');
    l.state.cancelAnswered(true);
    expect(l.state.state).toBe('cancelled');
    expect(l.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'cancelled' });
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'cancelling', 'cancelled']);
    expect(l.refused).toEqual([]);
  });

  it('a cancel exo does not take: back to streaming, and an early end then is exo_stream_incomplete', () => {
    const l = streaming();
    l.state.to('cancelling', 'asking exo');
    l.state.cancelAnswered(false);
    expect(l.state.state).toBe('streaming');
    expect(l.state.streamStopped('end', INCOMPLETE, LOST)).toEqual({ kind: 'error', failure: INCOMPLETE });
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'cancelling', 'streaming', 'failed']);
    expect(l.refused).toEqual([]);
  });

  it("a cancel sent before exo's answer began, refused after it began, goes back to where the answer is", () => {
    const l = life();
    l.state.to('dispatched', 'sent');
    l.state.to('cancelling', 'asking exo');
    l.state.answerBegan('whole');
    expect(l.state.state).toBe('cancelling');
    l.state.cancelAnswered(false);
    expect(l.path()).toEqual(['waiting', 'dispatched', 'cancelling', 'answering']);
  });

  it("client gone mid-stream: cancelled at once; the stream's close writes nothing more than the cancelled ending", () => {
    const l = streaming();
    l.state.cancel('client_disconnect', 'the client went away');
    expect(l.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'cancelled' });
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'cancelled']);
    expect(l.changed.at(-1)!.reason).toBe('the client went away');
  });

  it('early close nobody cancelled: failed as exo_stream_incomplete (end) or exo_connection_lost (close)', () => {
    const ended = streaming();
    expect(ended.state.streamStopped('end', INCOMPLETE, LOST)).toEqual({ kind: 'error', failure: INCOMPLETE });
    expect(ended.state.failure).toEqual(INCOMPLETE);
    expect(ended.path()).toEqual(['waiting', 'dispatched', 'streaming', 'failed']);
    const lost = streaming();
    expect(lost.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'error', failure: LOST });
    expect(lost.changed.at(-1)!.reason).toBe(LOST.message);
  });

  it('exo reports an error on its stream: failed "exo reported", no error of exobar\'s added, even while cancelling', () => {
    for (const cancel of [false, true]) {
      const l = streaming();
      if (cancel) l.state.to('cancelling', 'asking exo');
      l.state.sawStreamError('out of memory');
      l.state.sawStreamDone();
      expect(l.state.streamStopped('end', INCOMPLETE, LOST)).toEqual({ kind: 'nothing' });
      expect(l.state.state).toBe('failed');
      expect(l.changed.at(-1)!.reason).toBe('exo reported: out of memory');
    }
  });

  it('hung stream: failed by the idle timeout, the close then writes the timeout error', () => {
    const l = streaming();
    const hung = { code: 'exo_timeout', message: 'exo sent nothing for 30 s' };
    l.state.fail(hung);
    expect(l.state.streamStopped('close', INCOMPLETE, LOST)).toEqual({ kind: 'error', failure: hung });
    expect(l.path()).toEqual(['waiting', 'dispatched', 'streaming', 'failed']);
  });

  it('refuses and counts what the table does not allow: the state stays', () => {
    const l = life();
    expect(l.state.to('streaming', 'skipping dispatch')).toBe(false);
    expect(l.state.state).toBe('waiting');
    l.state.to('dispatched', 'sent');
    l.state.to('done', 'no answer began');
    l.state.to('held', 'too late to hold');
    expect(l.state.refused).toBe(3);
    expect(l.refused.map((c) => `${c.from}>${c.to}`)).toEqual(['waiting>streaming', 'dispatched>done', 'dispatched>held']);
    l.state.cancel('client_disconnect', 'the client went away');
    // An ended request takes no failure: refused too, and no failure is kept.
    expect(l.state.fail({ code: 'x', message: 'y' })).toBe(false);
    expect(l.state.refused).toBe(4);
    expect(l.state.failure).toBeNull();
  });

  it('ended states go nowhere; every state is in the table', () => {
    expect(PROXIED_REQUEST_TRANSITIONS.done).toEqual([]);
    expect(PROXIED_REQUEST_TRANSITIONS.cancelled).toEqual([]);
    expect(PROXIED_REQUEST_TRANSITIONS.failed).toEqual([]);
    for (const targets of Object.values(PROXIED_REQUEST_TRANSITIONS)) for (const t of targets) expect(PROXIED_REQUEST_TRANSITIONS).toHaveProperty(t);
  });
});
