import { describe, expect, it } from 'vitest';
import { classifyExoLine, lastFastSynchLine } from './exo-output';

describe('classifyExoLine', () => {
  it("reads exo's own words for the failures and the fast-synch line", () => {
    expect(classifyExoLine('Failed to acquire EXO pidfile at /Users/a/.exo/exo.pid: lock held')).toEqual({ kind: 'pidfile_held' });
    expect(classifyExoLine("OSError: [Errno 48] error while attempting to bind on address ('0.0.0.0', 52415): address already in use")).toEqual({
      kind: 'port_taken',
    });
    expect(classifyExoLine('[ 10:00:00.000 | INFO     ] FAST_SYNCH forced OFF')).toEqual({ kind: 'fast_synch', enabled: false });
    expect(classifyExoLine('[ 10:00:00.000 | INFO     ] FAST_SYNCH forced ON')).toEqual({ kind: 'fast_synch', enabled: true });
    expect(classifyExoLine('runner 0: Fast synch flag: 1')).toBeNull();
    expect(classifyExoLine('Starting EXO')).toBeNull();
  });

  it('takes the last fast-synch line of a log', () => {
    expect(lastFastSynchLine('FAST_SYNCH forced ON\nother\nFAST_SYNCH forced OFF\n')).toBe(false);
    expect(lastFastSynchLine('Starting EXO\n')).toBeNull();
  });
});
