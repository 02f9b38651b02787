/** Small builders for snapshots in the glue's tests. */
import type { RunnerStatus } from '../../shared/runner-protocol';
import { instanceFixture } from '../support/instance-fixture';
import { emptySnapshot, type LocalInstanceSnapshot, type RequestSnapshot, type Snapshot, type TtftSample, type Warning } from '../../shared/snapshot';

export function ttftSample(totalMs: number, at: number): TtftSample {
  return { requestId: `req-${at}`, at, totalMs, waitMs: 10, prefillMs: totalMs - 60, firstTokenMs: 50, promptTokens: 20 };
}

export function request(id: string, phase: RequestSnapshot['phase']): RequestSnapshot {
  return { id, phase, ageMs: 100, promptTokens: 20, completionTokens: 0 };
}

export function instance(
  id: string,
  overrides: Partial<Omit<LocalInstanceSnapshot, 'runner'>> & { status?: RunnerStatus; restarts?: number; lastExit?: LocalInstanceSnapshot['runner']['lastExit'] } = {},
): LocalInstanceSnapshot {
  const { status, restarts, lastExit, ...rest } = overrides;
  return instanceFixture({
    id,
    model: `sim/${id}`,
    modelName: `Model ${id}`,
    runner: { status: status ?? { kind: 'RunnerReady' }, pid: 100, restarts: restarts ?? 0, lastExit: lastExit ?? null, malformedLines: 0 },
    ...rest,
  });
}

export function warning(code: Warning['code'], instanceIds: string[]): Warning {
  return { code, instanceIds, title: `Warning ${code}`, risk: 'The GPU can wedge.', fix: 'Turn fast synch off.' };
}

export function snapshot(overrides: Partial<Snapshot> = {}): Snapshot {
  return { ...emptySnapshot(), seq: 1, at: 1_000, apiBaseUrl: 'http://127.0.0.1:52416/v1', ...overrides };
}
