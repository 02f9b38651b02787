import { describe, expect, it } from 'vitest';
import { instance, snapshot, warning } from '../../test/support/electron/snapshot-fixtures';
import { operatorAlerts } from './operator-alerts';

const exit = (reason: string, at: number) => ({ code: null, signal: 'SIGKILL', reason, at });

describe('operator alerts', () => {
  it('nothing to say when nothing changed', () => {
    const s = snapshot({ instances: [instance('a')], warnings: [warning('two_ring_fast_synch', ['a', 'b'])] });
    expect(operatorAlerts(s, { ...s, seq: 2 })).toEqual([]);
  });

  it('a runner that failed is reported once, on the transition', () => {
    const ready = snapshot({ instances: [instance('a', { modelName: 'A' })] });
    const failed = snapshot({
      seq: 2,
      instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'out of memory' }, lastExit: { code: 1, signal: null, reason: 'crashed', at: 50 } })],
    });
    const alerts = operatorAlerts(ready, failed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ kind: 'runner_failed', title: 'A failed', body: 'out of memory — crashed (exit code 1)' });
    expect(operatorAlerts(failed, { ...failed, seq: 3 })).toEqual([]);
  });

  it('a watchdog restart (restarts increased) is reported, with the fast-synch caveat when it was on', () => {
    const before = snapshot({ instances: [instance('a', { modelName: 'A' })] });
    const fastSynch = { override: 'on' as const, enabled: true, reason: 'forced on by user', reported: true };
    const after = snapshot({
      seq: 2,
      instances: [instance('a', { modelName: 'A', restarts: 1, fastSynch, lastExit: exit('watchdog: no event for 30 s in prefill', 70), status: { kind: 'RunnerLoading', layersLoaded: 0, totalLayers: 16 } })],
    });
    const [alert] = operatorAlerts(before, after);
    expect(alert?.kind).toBe('runner_restarted');
    expect(alert?.title).toBe('A was stuck and was restarted');
    expect(alert?.body).toContain('watchdog: no event for 30 s in prefill (signal SIGKILL). Restart 1.');
    expect(alert?.body).toContain('GPU may stay wedged');
  });

  it('a crash restart is told apart from a watchdog restart', () => {
    const before = snapshot({ instances: [instance('a', { modelName: 'A', restarts: 1, lastExit: exit('crashed', 10) })] });
    const after = snapshot({ instances: [instance('a', { modelName: 'A', restarts: 2, lastExit: exit('crashed', 20) })] });
    const [alert] = operatorAlerts(before, after);
    expect(alert).toMatchObject({ kind: 'runner_restarted', title: 'A stopped and was restarted' });
    expect(alert?.body).not.toContain('wedged');
  });

  it('a changed lastExit alone counts as a restart', () => {
    const before = snapshot({ instances: [instance('a', { restarts: 3, lastExit: exit('crashed', 10) })] });
    const after = snapshot({ instances: [instance('a', { restarts: 3, lastExit: exit('crashed', 11) })] });
    expect(operatorAlerts(before, after).map((a) => a.kind)).toEqual(['runner_restarted']);
  });

  it('a new shared-GPU warning is reported, an existing one is not, whatever the order of its instances', () => {
    const w = warning('two_ring_fast_synch', ['a', 'b']);
    const alerts = operatorAlerts(snapshot(), snapshot({ warnings: [w] }));
    expect(alerts).toEqual([{ key: 'warning:two_ring_fast_synch:a,b', kind: 'warning', title: w.title, body: `${w.risk} ${w.fix}` }]);
    expect(operatorAlerts(snapshot({ warnings: [w] }), snapshot({ warnings: [warning('two_ring_fast_synch', ['b', 'a'])] }))).toEqual([]);
  });

  it('on the first snapshot, failures and warnings already present are reported', () => {
    const first = snapshot({
      instances: [instance('a', { status: { kind: 'RunnerFailed', errorMessage: 'bad weights' } })],
      warnings: [warning('two_jaccl_shared_gpu', ['a', 'b'])],
    });
    expect(operatorAlerts(null, first).map((a) => a.kind)).toEqual(['runner_failed', 'warning']);
  });
});
