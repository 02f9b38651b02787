import { describe, expect, it } from 'vitest';
import type { RunnerExitSnapshot } from '../../shared/snapshot';
import { instance, snapshot, warning } from '../../test/support/electron/snapshot-fixtures';
import { operatorAlerts } from './operator-alerts';

const exit = (cause: RunnerExitSnapshot['cause'], message: string, at: number): RunnerExitSnapshot => ({
  cause,
  exitCode: null,
  signal: 'SIGKILL',
  message,
  at,
});

describe('operator alerts', () => {
  it('nothing to say when nothing changed', () => {
    const s = snapshot({ instances: [instance('a')], warnings: [warning('two_ring_fast_synch', ['a', 'b'])] });
    expect(operatorAlerts(s, { ...s, seq: 2 })).toEqual([]);
  });

  it('a runner that failed for good is reported once, on the transition, with the runner’s words and what to do', () => {
    const ready = snapshot({ instances: [instance('a', { modelName: 'A' })] });
    const failed = snapshot({
      seq: 2,
      instances: [
        instance('a', {
          modelName: 'A',
          status: { kind: 'RunnerFailed', errorMessage: 'model not found: /models/x' },
          runner: {
            state: 'failed',
            lastExit: { cause: 'startup_failed', exitCode: 1, signal: null, message: 'runner failed to start: model not found: /models/x', at: 50 },
            attention: 'fix it, then retry',
          },
        }),
      ],
    });
    const alerts = operatorAlerts(ready, failed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      kind: 'runner_failed',
      title: 'A failed',
      body: 'runner failed to start: model not found: /models/x (exit code 1) — fix it, then retry',
    });
    expect(operatorAlerts(failed, { ...failed, seq: 3 })).toEqual([]);
  });

  it('a stuck runner not relaunched needs attention', () => {
    const before = snapshot({ instances: [instance('a', { modelName: 'A' })] });
    const after = snapshot({
      instances: [
        instance('a', { modelName: 'A', runner: { state: 'needs_attention', lastExit: exit('stuck', 'no output', 70), attention: 'the GPU may be wedged' } }),
      ],
    });
    expect(operatorAlerts(before, after)).toMatchObject([{ kind: 'runner_failed', title: 'A needs attention' }]);
  });

  it('a restart after a crash is told apart from one after the runner was stuck, by the exit’s cause', () => {
    const before = snapshot({ instances: [instance('a', { modelName: 'A', runner: { lastExit: exit('crashed', 'crashed', 10) } })] });
    const crashed = snapshot({
      at: 20,
      instances: [instance('a', { modelName: 'A', runner: { state: 'restarting', restartAt: 2020, lastExit: exit('crashed', 'crashed', 20) } })],
    });
    expect(operatorAlerts(before, crashed)).toMatchObject([
      { kind: 'runner_restarted', title: 'A stopped and was restarted', body: 'crashed (signal SIGKILL). Restart 1 in 2 s.' },
    ]);
    // Any message wording: the cause decides.
    const stuck = snapshot({ instances: [instance('a', { modelName: 'A', runner: { state: 'restarting', lastExit: exit('stuck', 'whatever words', 30) } })] });
    expect(operatorAlerts(before, stuck)).toMatchObject([{ kind: 'runner_restarted', title: 'A was stuck and was restarted' }]);
  });

  it('a new shared-GPU warning is reported, an existing one is not, whatever the order of its instances', () => {
    const w = warning('two_ring_fast_synch', ['a', 'b']);
    const alerts = operatorAlerts(snapshot(), snapshot({ warnings: [w] }));
    expect(alerts).toEqual([{ key: 'warning:two_ring_fast_synch:a,b', kind: 'warning', title: w.title, body: `${w.risk} ${w.fix}` }]);
    expect(operatorAlerts(snapshot({ warnings: [w] }), snapshot({ warnings: [warning('two_ring_fast_synch', ['b', 'a'])] }))).toEqual([]);
  });

  it('on the first snapshot, failures and warnings already present are reported', () => {
    const first = snapshot({
      instances: [instance('a', { status: { kind: 'RunnerFailed', errorMessage: 'bad weights' }, runner: { state: 'failed' } })],
      warnings: [warning('two_jaccl_shared_gpu', ['a', 'b'])],
    });
    expect(operatorAlerts(null, first).map((a) => a.kind)).toEqual(['runner_failed', 'warning']);
  });
});
