/**
 * An ExoProcessManager driving the fake exo command, with short timings, a private
 * HOME/data directory and port, every state it went through (each checked against
 * the snapshot schema), and every pid of the fake's tree it saw (killed after the
 * test whatever happened).
 */
import { afterEach } from 'vitest';
import { ExoProcessStateSchema, type ExoProcessState } from '../../../shared/exo-process';
import { ExoProcessManager, type ExoProcessManagerOptions } from '../../../electron/core/exo-process/exo-process-manager';
import { descendants } from '../../../electron/core/process/process-identity';
import { FAKE_EXO_COMMAND, killAll, makeFakeExoDirs, processesWithHome, type FakeExoDirs } from './harness';
import { freePort } from '../free-port';

export interface ManagerFixture {
  manager: ExoProcessManager;
  dirs: FakeExoDirs;
  port: number;
  /** Every state published, in order. */
  states: ExoProcessState[];
  /** exo's pid and every descendant, right now. */
  tree(): Promise<number[]>;
}

const live: Array<{ manager: ExoProcessManager; dirs: FakeExoDirs; pids: Set<number> }> = [];

export const FAST_TIMING = {
  readyTimeoutMs: 30_000,
  pollIntervalMs: 100,
  sigintGraceMs: 3_000,
  sigtermGraceMs: 2_000,
  sigkillWaitMs: 2_000,
  runnerTermGraceMs: 1_000,
  runnerKillWaitMs: 2_000,
  pidfileReleaseTimeoutMs: 15_000,
  childScanIntervalMs: 200,
} as const;

/** A manager for the fake exo; `env` adds FAKE_EXO_* knobs (HOME is the fixture's own). */
export async function fakeExoManager(env: Record<string, string> = {}, options: Partial<ExoProcessManagerOptions> = {}): Promise<ManagerFixture> {
  const dirs = makeFakeExoDirs();
  const port = await freePort();
  const manager = new ExoProcessManager({
    dataDir: dirs.dataDir,
    apiPort: port,
    settings: { command: FAKE_EXO_COMMAND, args: ['-v'], env: { HOME: dirs.home, ...env } },
    timing: FAST_TIMING,
    ...options,
  });
  const pids = new Set<number>();
  const states: ExoProcessState[] = [];
  manager.subscribe((state) => {
    // Every state the manager publishes must meet the snapshot's contract.
    states.push(ExoProcessStateSchema.parse(state));
    if (state.pid !== null) pids.add(state.pid);
  });
  live.push({ manager, dirs, pids });
  const tree = async (): Promise<number[]> => {
    const pid = manager.state().pid;
    if (pid === null) return [];
    const all = [pid, ...(await descendants(pid)).map((d) => d.pid)];
    for (const p of all) pids.add(p);
    return all;
  };
  return { manager, dirs, port, states, tree };
}

afterEach(async () => {
  const refused: unknown[] = [];
  for (const { manager, dirs, pids } of live.splice(0)) {
    await manager.shutdown().catch(() => undefined);
    refused.push(...manager.transitionLog.refused);
    // Whatever happened in the test, nothing of this fake exo's tree outlives it (orphans included).
    killAll([...pids, ...(process.platform === 'linux' ? processesWithHome(dirs.home) : [])]);
    dirs.remove();
  }
  // Every status change went through the table: a refused one is a manager bug.
  if (refused.length > 0) throw new Error(`refused exo status changes: ${JSON.stringify(refused)}`);
});
