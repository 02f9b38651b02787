import { describe, expect, it } from 'vitest';
import { STATE_HISTORY, StateMachine, type StateChange, type TransitionTable } from './state-machine';

type Light = 'off' | 'warming' | 'on';
const TABLE: TransitionTable<Light> = { off: ['warming'], warming: ['on', 'off'], on: ['off'] };

function machine(now = () => 7) {
  const changed: StateChange<Light>[] = [];
  const refused: StateChange<Light>[] = [];
  const m = new StateMachine(TABLE, 'off', { changed: (c) => changed.push(c), refused: (c) => refused.push(c) }, now);
  return { m, changed, refused };
}

describe('the one-writer state machine', () => {
  it('moves only along the table, reports each accepted change once with its time and reason', () => {
    const { m, changed, refused } = machine();
    expect(m.transition('warming', 'switched on')).toBe(true);
    expect(m.transition('on', 'warm')).toBe(true);
    expect(m.state).toBe('on');
    expect(changed).toEqual([
      { from: 'off', to: 'warming', reason: 'switched on', at: 7 },
      { from: 'warming', to: 'on', reason: 'warm', at: 7 },
    ]);
    expect(m.history).toEqual(changed);
    expect(refused).toEqual([]);
  });

  it('refuses what the table does not allow: the state stays, the refusal is counted, kept and reported', () => {
    const { m, changed, refused } = machine();
    expect(m.transition('on', 'skip the warm-up')).toBe(false);
    expect(m.state).toBe('off');
    expect(m.refused).toBe(1);
    expect(refused).toEqual([{ from: 'off', to: 'on', reason: 'skip the warm-up', at: 7 }]);
    expect(m.refusals).toEqual(refused);
    expect(changed).toEqual([]);
  });

  it('staying put is neither a transition nor a refusal', () => {
    const { m, changed, refused } = machine();
    expect(m.transition('off', 'again')).toBe(false);
    expect(m.refused).toBe(0);
    expect(changed).toEqual([]);
    expect(refused).toEqual([]);
  });

  it('keeps the latest transitions only, oldest first', () => {
    let t = 0;
    const { m } = machine(() => t++);
    for (let i = 0; i < STATE_HISTORY + 10; i++) m.transition(m.state === 'off' ? 'warming' : 'off', `step ${i}`);
    expect(m.history).toHaveLength(STATE_HISTORY);
    expect(m.history[0]!.reason).toBe('step 10');
    expect(m.history.at(-1)!.reason).toBe(`step ${STATE_HISTORY + 9}`);
  });

  it('answers membership and the table', () => {
    const { m } = machine();
    expect(m.in(['off', 'on'])).toBe(true);
    expect(m.in(['warming'])).toBe(false);
    expect(m.allows('on', 'warming')).toBe(false);
  });
});
