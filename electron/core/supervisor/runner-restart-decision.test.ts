import { describe, expect, it } from 'vitest';
import { decideAfterDown, WEDGED_GPU_ADVICE, type RunnerDown } from './runner-restart-decision';

const policy = { baseDelayMs: 1000, maxDelayMs: 4000, maxRestarts: 2 };
const down = (patch: Partial<RunnerDown>): RunnerDown => ({ cause: 'crashed', died: true, fastSynch: false, ...patch });
/** A failure counter that says `n` failures count now, and records that it was asked. */
const counted = (n: number) => {
  const calls: number[] = [];
  return { calls, count: () => (calls.push(n), n) };
};

describe('what a runner that went down does next, by cause', () => {
  it('a start-up failure or a fast-synch mismatch fails for good, without counting', () => {
    for (const cause of ['startup_failed', 'fast_synch_mismatch'] as const) {
      const c = counted(1);
      expect(decideAfterDown(down({ cause }), c.count, policy)).toMatchObject({ to: 'failed', delay: null, attention: expect.stringMatching(/cannot start/) });
      expect(c.calls).toEqual([]);
    }
  });

  it('stuck and alive after SIGKILL, or stuck with fast synch on: needs attention, without counting', () => {
    const c = counted(1);
    expect(decideAfterDown(down({ cause: 'stuck', died: false }), c.count, policy)).toEqual({
      to: 'needs_attention',
      delay: null,
      attention: `the stuck runner survived SIGKILL: ${WEDGED_GPU_ADVICE}`,
    });
    expect(decideAfterDown(down({ cause: 'stuck', fastSynch: true }), c.count, policy)).toEqual({
      to: 'needs_attention',
      delay: null,
      attention: `the runner was stuck with fast synch on: ${WEDGED_GPU_ADVICE}`,
    });
    expect(c.calls).toEqual([]);
  });

  it('a crash, or stuck and safely gone with fast synch off: restarts with backoff until the cap', () => {
    expect(decideAfterDown(down({}), counted(1).count, policy)).toEqual({ to: 'restarting', delay: 1000, attention: null });
    expect(decideAfterDown(down({ cause: 'stuck' }), counted(2).count, policy)).toEqual({ to: 'restarting', delay: 2000, attention: null });
    expect(decideAfterDown(down({}), counted(3).count, policy)).toEqual({
      to: 'failed',
      delay: null,
      attention: '3 failures within 10 min: not restarted again; see its logs, then retry',
    });
  });
});
