import { describe, expect, it } from 'vitest';
import type { RunnerStatus } from '../../shared/runner-protocol';
import { RUNNER_STATES, type ExoInstanceSnapshot, type RunnerState } from '../../shared/snapshot';
import { INSTANCE_LIFECYCLES, instanceLifecycle, lifecycleCounts, lifecycleSummary, runnerLifecycle } from '../../shared/instance-state';
import { instanceFixture } from '../support/instance-fixture';
import { exoInstanceFixture } from '../support/exo-snapshot-fixture';

/** A local instance as the supervisor reports it: its state machine's state beside exo's runner status. */
const local = (state: RunnerState, status: RunnerStatus) =>
  instanceFixture({
    runner: { state, status, pid: 1, restarts: state === 'restarting' ? 1 : 0, restartAt: null, lastExit: null, attention: null, malformedLines: 0 },
  });

function exoWith(statuses: string[]): ExoInstanceSnapshot {
  const base = exoInstanceFixture();
  const template = base.exo.runners[0]!;
  return { ...base, exo: { ...base.exo, runners: statuses.map((status, i) => ({ ...template, runnerId: `r${i}`, status, errorMessage: null })) } };
}

describe('instanceLifecycle', () => {
  it('says loading for every step before ready, and serving only once the runner is ready or running', () => {
    expect(instanceLifecycle(local('starting', { kind: 'RunnerConnecting' }))).toBe('loading');
    expect(instanceLifecycle(local('loading', { kind: 'RunnerLoading', layersLoaded: 10, totalLayers: 16 }))).toBe('loading');
    expect(instanceLifecycle(local('warming_up', { kind: 'RunnerWarmingUp' }))).toBe('loading');
    expect(instanceLifecycle(local('ready', { kind: 'RunnerReady' }))).toBe('serving');
    expect(instanceLifecycle(local('running', { kind: 'RunnerRunning' }))).toBe('serving');
  });

  it('says restarting while a restart is scheduled or a relaunch drains', () => {
    expect(instanceLifecycle(local('restarting', { kind: 'RunnerFailed', errorMessage: 'crashed' }))).toBe('restarting');
    expect(instanceLifecycle(local('draining', { kind: 'RunnerRunning' }))).toBe('restarting');
  });

  // The pairs the supervisor really produces (runner-state-machine.test.ts drives them).
  it('says stopping from the Shutdown on, and never serving beside a shutdown status', () => {
    expect(instanceLifecycle(local('stopping', { kind: 'RunnerShuttingDown' }))).toBe('stopping');
    expect(instanceLifecycle(local('stopped', { kind: 'RunnerShutdown' }))).toBe('stopping');
    expect(instanceLifecycle(local('ready', { kind: 'RunnerShuttingDown' }))).toBe('stopping');
    expect(instanceLifecycle(local('running', { kind: 'RunnerShutdown' }))).toBe('stopping');
  });

  it('says failed while a dead runner is being killed, for a runner that reported RunnerFailed, and when down for good', () => {
    expect(instanceLifecycle(local('down', { kind: 'RunnerFailed', errorMessage: 'runner stuck' }))).toBe('failed');
    expect(instanceLifecycle(local('running', { kind: 'RunnerFailed', errorMessage: 'Metal: out of memory' }))).toBe('failed');
    expect(instanceLifecycle(local('failed', { kind: 'RunnerFailed', errorMessage: 'out of memory' }))).toBe('failed');
    expect(instanceLifecycle(local('needs_attention', { kind: 'RunnerFailed', errorMessage: 'stuck' }))).toBe('failed');
  });

  it('gives every runner state a word', () => {
    for (const state of RUNNER_STATES) expect(INSTANCE_LIFECYCLES).toContain(runnerLifecycle(state, { kind: 'RunnerReady' }));
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
    const instances = [
      local('ready', { kind: 'RunnerReady' }),
      local('running', { kind: 'RunnerRunning' }),
      local('loading', { kind: 'RunnerLoading', layersLoaded: 1, totalLayers: 2 }),
    ];
    expect(lifecycleCounts(instances)).toEqual({ loading: 1, restarting: 0, serving: 2, stopping: 0, failed: 0 });
    expect(lifecycleSummary(instances)).toBe('1 loading · 2 serving');
    expect(lifecycleSummary([])).toBe('none');
  });
});
