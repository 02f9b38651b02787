/**
 * The real core (node, API server on port 0) whose settings run the fake exo command:
 * a private HOME, data directory and exo port per test, short stop timings, and a
 * cleanup after each test that leaves no process of the fake's tree behind.
 */
import { afterEach, expect } from 'vitest';
import { defaultSettings, type Settings } from '../../../shared/api';
import { ExoProcessStateSchema } from '../../../shared/exo-process';
import { SnapshotSchema } from '../../../shared/snapshot';
import { descendants } from '../../../electron/core/process/process-identity';
import { startCoreRig, type CoreRig } from '../api-harness';
import { FAKE_EXO_COMMAND, killAll, makeFakeExoDirs, processesWithHome, type FakeExoDirs } from './harness';
import { FAST_TIMING } from './manager-fixture';
import { freePort } from '../free-port';

const rigs: Array<{ rig: CoreRig; dirs: FakeExoDirs; pids: Set<number> }> = [];

afterEach(async () => {
  for (const { rig, dirs, pids } of rigs.splice(0)) {
    await rig.close();
    killAll([...pids, ...(process.platform === 'linux' ? processesWithHome(dirs.home) : [])]);
    dirs.remove();
  }
});

export interface ExoCoreRigOptions {
  /** The setting `exo.start` (default false). */
  start?: boolean;
  /** More of exo's environment (FAKE_EXO_* knobs). */
  env?: Record<string, string>;
  /** `exo.args` (default `-v`). */
  args?: string[];
}

/** The real core whose settings start the fake exo, with every pid of exo's tree it saw. */
export async function exoCoreRig(options: ExoCoreRigOptions = {}) {
  const dirs = makeFakeExoDirs();
  const apiPort = await freePort();
  const settings: Settings = {
    ...defaultSettings(),
    exo: {
      ...defaultSettings().exo,
      url: null,
      hold: true,
      start: options.start ?? false,
      apiPort,
      command: FAKE_EXO_COMMAND,
      args: options.args ?? ['-v'],
      env: { HOME: dirs.home, FAKE_EXO_RUNNERS: '1', ...options.env },
    },
  };
  const rig = await startCoreRig({ settings, exoProcess: { manager: { timing: FAST_TIMING }, log: () => undefined } });
  const pids = new Set<number>();
  rigs.push({ rig, dirs, pids });
  /** exo's pid and its descendants now (remembered for the cleanup). */
  const tree = async (): Promise<number[]> => {
    const pid = rig.core.exoProcess.state().pid;
    if (pid === null) return [];
    const all = [pid, ...(await descendants(pid)).map((d) => d.pid)];
    for (const p of all) pids.add(p);
    return all;
  };
  /** GET /api/exo/process, checked against the schema. */
  const state = async () => {
    const answer = await rig.control('GET', '/api/exo/process');
    expect(answer.status).toBe(200);
    return ExoProcessStateSchema.parse(answer.body);
  };
  /** GET /api/state, checked against the schema. */
  const snapshot = async () => SnapshotSchema.parse((await rig.control('GET', '/api/state')).body);
  return { rig, dirs, apiPort, tree, state, snapshot };
}

/** The test closes this rig itself (and checks what its close did): the cleanup leaves it alone. */
export function forgetRig(rig: CoreRig): void {
  const at = rigs.findIndex((r) => r.rig === rig);
  if (at >= 0) rigs.splice(at, 1);
}
