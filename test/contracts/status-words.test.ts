import { describe, expect, it } from 'vitest';
import type { RunnerStatus } from '../../shared/runner-protocol';
import { RUNNER_STATES, type RunnerState } from '../../shared/snapshot';
import { runnerLifecycle } from '../../shared/instance-state';
import { instanceStatusWords, localRunnerTone, localRunnerWords, statusTone } from '../../shared/status-words';
import { instanceFixture } from '../support/instance-fixture';

/** Every status a runner can report, one of each kind. */
const STATUSES: RunnerStatus[] = [
  { kind: 'RunnerIdle' },
  { kind: 'RunnerConnecting' },
  { kind: 'RunnerConnected' },
  { kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 16 },
  { kind: 'RunnerLoaded' },
  { kind: 'RunnerWarmingUp' },
  { kind: 'RunnerReady' },
  { kind: 'RunnerRunning' },
  { kind: 'RunnerShuttingDown' },
  { kind: 'RunnerShutdown' },
  { kind: 'RunnerFailed', errorMessage: 'Runner stopped answering' },
];

const local = (state: RunnerState, status: RunnerStatus) =>
  instanceFixture({
    runner: { state, status, pid: 1, restarts: 0, restartAt: null, lastExit: null, attention: null, malformedLines: 0 },
  });

describe('a local runner’s words and tone follow its one state', () => {
  it('says Stopping, not Ready, from the moment a stop begins (the status still says RunnerReady)', () => {
    expect(localRunnerWords('stopping', { kind: 'RunnerReady' })).toBe('Stopping');
    expect(localRunnerTone('stopping', { kind: 'RunnerReady' })).toBe('idle');
    expect(instanceStatusWords(local('stopping', { kind: 'RunnerReady' }))).toBe('Stopping');
  });

  it('says Failed, not Ready, while a runner that went down is killed (the watchdog kill)', () => {
    expect(localRunnerWords('down', { kind: 'RunnerReady' })).toBe('Failed');
    expect(localRunnerTone('down', { kind: 'RunnerReady' })).toBe('bad');
    expect(instanceStatusWords(local('down', { kind: 'RunnerFailed', errorMessage: 'Runner stopped answering' }))).toBe('Failed: Runner stopped answering');
  });

  it('words a ready runner by the status it reported', () => {
    expect(localRunnerWords('ready', { kind: 'RunnerReady' })).toBe('Ready');
    expect(localRunnerWords('loading', { kind: 'RunnerLoading', layersLoaded: 3, totalLayers: 16 })).toBe('Loading 3 of 16 layers');
    expect(localRunnerTone('running', { kind: 'RunnerRunning' })).toBe('busy');
  });

  // Every pair of state and status: the words and the dot never disagree with the lifecycle
  // the header, the tray's summary and the API give for the same runner.
  for (const state of RUNNER_STATES) {
    it(`state ${state}: serving words and tones only when the lifecycle is serving`, () => {
      for (const status of STATUSES) {
        const lifecycle = runnerLifecycle(state, status);
        const words = localRunnerWords(state, status);
        const tone = localRunnerTone(state, status);
        const servingWords = words === 'Ready' || words === 'Running';
        expect(servingWords, `${state} + ${status.kind}: "${words}"`).toBe(
          lifecycle === 'serving' && (status.kind === 'RunnerReady' || status.kind === 'RunnerRunning'),
        );
        expect(tone === 'ok' || tone === 'busy', `${state} + ${status.kind}: ${tone}`).toBe(servingWords);
        expect(tone === 'bad', `${state} + ${status.kind}: ${tone}`).toBe(lifecycle === 'failed');
        expect(instanceStatusWords(local(state, status)).startsWith('Ready')).toBe(words === 'Ready');
      }
    });
  }

  it('says a runner on its way up is starting, in the starting colour, never a bare "Connected" or "Loaded" in the warning orange', () => {
    expect(localRunnerWords('starting', { kind: 'RunnerConnected' })).toBe('Starting: connected, loading next');
    expect(localRunnerWords('loading', { kind: 'RunnerLoaded' })).toBe('Starting: loaded, warming up next');
    expect(statusTone('RunnerConnected')).toBe('starting');
    expect(localRunnerTone('starting', { kind: 'RunnerConnected' })).toBe('starting');
  });

  it('gives exo runners the same tones by status', () => {
    expect(STATUSES.map((s) => statusTone(s.kind))).toEqual(['idle', 'starting', 'starting', 'starting', 'starting', 'starting', 'ok', 'busy', 'idle', 'idle', 'bad']);
  });
});
