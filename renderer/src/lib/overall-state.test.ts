import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../../shared/snapshot';
import { exoInstanceFixture, exoSectionFixture } from '../../../test/support/exo-snapshot-fixture';
import { instance, snapshot, withStatus } from '../../../test/support/renderer/fixtures';
import { overallState } from './overall-state';

const snap = (overrides: Partial<Snapshot>): Snapshot => snapshot(overrides);
const loading = withStatus({ kind: 'RunnerLoading', layersLoaded: 10, totalLayers: 16 }, { id: 'b', modelName: 'Llama 3.2 3B' });

describe('overallState', () => {
  it('says a model is loading (not "All good · 0 models running") while the only model loads', () => {
    const state = overallState(snap({ instances: [loading] }), 'connected', true);
    expect(state).toMatchObject({ level: 'loading', headline: '1 model loading', running: 0, loading: 1 });
    // Flat values only: the header selects it with a shallow comparison.
    expect(Object.values(state).every((v) => typeof v !== 'object')).toBe(true);
  });

  it('counts a serving model as running and a loading one beside it as loading', () => {
    const state = overallState(snap({ instances: [instance(), loading] }), 'connected', true);
    expect(state).toMatchObject({ level: 'loading', headline: '1 model loading', running: 1 });
  });

  it('says "All good" once every model serves', () => {
    expect(overallState(snap({ instances: [instance(), instance({ id: 'c' })] }), 'connected', true)).toMatchObject({
      level: 'ok',
      headline: 'All good',
      running: 2,
    });
  });

  it('says restarting for a runner coming back after an exit', () => {
    const base = withStatus({ kind: 'RunnerConnecting' });
    const restarting = { ...base, runner: { ...base.runner, state: 'restarting' as const, restarts: 1 } };
    expect(overallState(snap({ instances: [restarting] }), 'connected', true)).toMatchObject({ level: 'loading', headline: '1 model restarting' });
  });

  it('puts a failed runner before a loading one', () => {
    const failed = withStatus({ kind: 'RunnerFailed', errorMessage: 'out of memory' }, { modelName: 'Llama 3.2 1B' });
    expect(overallState(snap({ instances: [failed, loading] }), 'connected', true)).toMatchObject({ level: 'failed', headline: 'Llama 3.2 1B failed' });
  });

  it('says "Launching" while a launch runs with nothing loading yet', () => {
    const launch = { state: 'running' as const, step: 'Starting the safe pair', models: ['a'], current: 0, error: null, startedAt: 1 };
    expect(overallState(snap({ launch }), 'connected', true)).toMatchObject({ level: 'loading', headline: 'Launching' });
  });

  it('says disconnected before anything else', () => {
    expect(overallState(snap({ instances: [loading] }), 'error', true)).toMatchObject({ level: 'failed', headline: 'Reconnecting…' });
  });

  it("does not count exo's models once exo stops answering: only the local ones it still sees", () => {
    const failing = exoInstanceFixture();
    const serving = { ...failing, id: 'exo-serving', exo: { ...failing.exo, runners: failing.exo.runners.map((r) => ({ ...r, status: 'RunnerReady' })) } };
    const attached = snap({ instances: [instance(), failing, serving], exo: exoSectionFixture() });
    expect(overallState(attached, 'connected', true)).toMatchObject({ level: 'failed', headline: 'Llama 3.3 70B failed', running: 2 });
    const lost = snap({ instances: [instance(), failing, serving], exo: exoSectionFixture({ connected: false }) });
    expect(overallState(lost, 'connected', true)).toMatchObject({ level: 'ok', running: 1 });
  });
});
