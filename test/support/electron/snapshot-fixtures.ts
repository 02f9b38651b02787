/** Small builders for snapshots in the glue's tests. */
import { stateOf } from '../runner-state-of';
import type { RunnerStatus } from '../../../shared/runner-protocol';
import { instanceFixture } from '../instance-fixture';
import { emptySnapshot, type LocalInstanceSnapshot, type RequestSnapshot, type Snapshot, type TtftSample, type Warning } from '../../../shared/snapshot';

export function ttftSample(totalMs: number, at: number): TtftSample {
  return { requestId: `req-${at}`, at, totalMs, waitMs: 10, prefillMs: totalMs - 60, firstTokenMs: 50, promptTokens: 20 };
}

export function request(id: string, phase: RequestSnapshot['phase']): RequestSnapshot {
  return { id, phase, ageMs: 100, promptTokens: 20, completionTokens: 0, decodeTokensPerSecond: null, itlP50Ms: null, itlP95Ms: null };
}

export function instance(
  id: string,
  overrides: Partial<Omit<LocalInstanceSnapshot, 'runner'>> & { status?: RunnerStatus; runner?: Partial<LocalInstanceSnapshot['runner']> } = {},
): LocalInstanceSnapshot {
  const { status, runner, ...rest } = overrides;
  return instanceFixture({
    id,
    model: `sim/${id}`,
    modelName: `Model ${id}`,
    runner: {
      // The state a real supervisor shows with that status (a failed status: down for good).
      state: stateOf(status ?? { kind: 'RunnerReady' }),
      status: status ?? { kind: 'RunnerReady' },
      pid: 100,
      restarts: 0,
      restartAt: null,
      lastExit: null,
      attention: null,
      malformedLines: 0,
      ...runner,
    },
    ...rest,
  });
}

export function warning(code: Warning['code'], instanceIds: string[]): Warning {
  return { code, instanceIds, title: `Warning ${code}`, risk: 'The GPU can wedge.', fix: 'Turn fast synch off.' };
}

export function snapshot(overrides: Partial<Snapshot> = {}): Snapshot {
  return { ...emptySnapshot(), seq: 1, at: 1_000, apiBaseUrl: 'http://127.0.0.1:52416/v1', ...overrides };
}
