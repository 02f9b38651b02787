import { describe, expect, it } from 'vitest';
import type { RunnerStatus } from '../../shared/runner-protocol';
import type { ExoInstanceSnapshot } from '../../shared/snapshot';
import { instanceLifecycle, lifecycleCounts, lifecycleSummary } from '../../shared/instance-state';
import { instanceFixture } from '../support/instance-fixture';
import { exoInstanceFixture } from '../support/exo-snapshot-fixture';

const local = (status: RunnerStatus, lastExit: boolean = false) =>
  instanceFixture({
    runner: {
      status,
      pid: 1,
      restarts: lastExit ? 1 : 0,
      lastExit: lastExit ? { code: 1, signal: null, reason: 'crashed', at: 1 } : null,
      malformedLines: 0,
    },
  });

function exoWith(statuses: string[]): ExoInstanceSnapshot {
  const base = exoInstanceFixture();
  const template = base.exo.runners[0]!;
  return { ...base, exo: { ...base.exo, runners: statuses.map((status, i) => ({ ...template, runnerId: `r${i}`, status, errorMessage: null })) } };
}

describe('instanceLifecycle', () => {
  it('says loading for every step before ready, and serving only once the runner is ready or running', () => {
    for (const kind of ['RunnerIdle', 'RunnerConnecting', 'RunnerConnected', 'RunnerLoaded', 'RunnerWarmingUp'] as const) {
      expect(instanceLifecycle(local({ kind }))).toBe('loading');
    }
    expect(instanceLifecycle(local({ kind: 'RunnerLoading', layersLoaded: 10, totalLayers: 16 }))).toBe('loading');
    expect(instanceLifecycle(local({ kind: 'RunnerReady' }))).toBe('serving');
    expect(instanceLifecycle(local({ kind: 'RunnerRunning' }))).toBe('serving');
  });

  it('says restarting when a runner that went down is on its way up again', () => {
    expect(instanceLifecycle(local({ kind: 'RunnerConnecting' }, true))).toBe('restarting');
    expect(instanceLifecycle(local({ kind: 'RunnerReady' }, true))).toBe('serving');
  });

  it('says stopping while shutting down and failed for a failed runner', () => {
    expect(instanceLifecycle(local({ kind: 'RunnerShuttingDown' }))).toBe('stopping');
    expect(instanceLifecycle(local({ kind: 'RunnerFailed', errorMessage: 'out of memory' }))).toBe('failed');
  });

  it('derives an exo instance from all its runners: one failed shard fails it, one loading shard keeps it loading', () => {
    expect(instanceLifecycle(exoWith(['RunnerReady', 'RunnerFailed']))).toBe('failed');
    expect(instanceLifecycle(exoWith(['RunnerReady', 'RunnerLoading']))).toBe('loading');
    expect(instanceLifecycle(exoWith(['RunnerReady', 'RunnerRunning']))).toBe('serving');
    expect(instanceLifecycle(exoWith(['RunnerReady', 'RunnerShuttingDown']))).toBe('stopping');
    expect(instanceLifecycle(exoWith([]))).toBe('loading');
  });
});

describe('lifecycle counts and summary', () => {
  it('counts each state and names only the non-zero ones', () => {
    const instances = [local({ kind: 'RunnerReady' }), local({ kind: 'RunnerRunning' }), local({ kind: 'RunnerLoading', layersLoaded: 1, totalLayers: 2 })];
    expect(lifecycleCounts(instances)).toEqual({ loading: 1, restarting: 0, serving: 2, stopping: 0, failed: 0 });
    expect(lifecycleSummary(instances)).toBe('1 loading · 2 serving');
    expect(lifecycleSummary([])).toBe('none');
  });
});
