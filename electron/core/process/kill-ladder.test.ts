import { describe, expect, it } from 'vitest';
import { climbKillLadder, type KillRung } from './kill-ladder';

const LADDER: KillRung[] = [
  { signal: 'SIGINT', waitMs: 30 },
  { signal: 'SIGTERM', waitMs: 20 },
  { signal: 'SIGKILL', waitMs: 10 },
];

/** A process that exits after the `exitsOn`-th signal (null: never), recording what it got. */
function fakeProcess(exitsOn: NodeJS.Signals | null) {
  const log: string[] = [];
  let got: NodeJS.Signals | null = null;
  return {
    log,
    ops: {
      send: (signal: NodeJS.Signals) => {
        got = signal;
        log.push(`send ${signal}`);
      },
      waitExit: (ms: number) => {
        log.push(`wait ${ms}`);
        return Promise.resolve(got === exitsOn);
      },
      beforeRung: (rung: KillRung, previous: KillRung | null) => {
        log.push(`before ${rung.signal} after ${previous?.signal ?? 'nothing'}`);
      },
    },
  };
}

describe('the kill ladder', () => {
  it('stops at the first signal the process exits on', async () => {
    const p = fakeProcess('SIGINT');
    expect(await climbKillLadder(LADDER, p.ops)).toEqual({ signal: 'SIGINT', exited: true });
    expect(p.log).toEqual(['before SIGINT after nothing', 'send SIGINT', 'wait 30']);
  });

  it('escalates rung by rung, waiting each rung out', async () => {
    const p = fakeProcess('SIGKILL');
    expect(await climbKillLadder(LADDER, p.ops)).toEqual({ signal: 'SIGKILL', exited: true });
    expect(p.log).toEqual([
      'before SIGINT after nothing',
      'send SIGINT',
      'wait 30',
      'before SIGTERM after SIGINT',
      'send SIGTERM',
      'wait 20',
      'before SIGKILL after SIGTERM',
      'send SIGKILL',
      'wait 10',
    ]);
  });

  it('says so when the process outlives the last rung (a wedged GPU), naming the last signal', async () => {
    const p = fakeProcess(null);
    expect(await climbKillLadder(LADDER, p.ops)).toEqual({ signal: 'SIGKILL', exited: false });
  });

  it('with no rungs sends nothing', async () => {
    const p = fakeProcess(null);
    expect(await climbKillLadder([], p.ops)).toEqual({ signal: null, exited: false });
    expect(p.log).toEqual([]);
  });
});
