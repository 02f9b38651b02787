/**
 * A real RunnerSupervisor over the scripted fake runner (fake-runner.mjs), with every
 * event it emits kept in order and the lifecycle words a view would show after each
 * event: the rig the supervisor's sequence tests share.
 */
import { fileURLToPath } from 'node:url';
import { instanceLifecycle, type InstanceLifecycle } from '../../shared/instance-state';
import type { RunnerState } from '../../shared/snapshot';
import { RunnerProcess, type TerminateResult } from '../../electron/core/supervisor/runner-process';
import { UNKNOWN_MODEL_PRIOR } from '../../electron/core/supervisor/runner-rates';
import { RunnerSupervisor, type SupervisorEvent } from '../../electron/core/supervisor/runner-supervisor';
import { instanceFixture } from './instance-fixture';
import { sleep } from './eventually';

export const FAKE_RUNNER = fileURLToPath(new URL('./fake-runner.mjs', import.meta.url));

/** A runner stuck in the kernel (a wedged GPU): SIGTERM and SIGKILL do not end it. */
export class UnkillableRunner extends RunnerProcess {
  static made: UnkillableRunner[] = [];
  constructor(...args: ConstructorParameters<typeof RunnerProcess>) {
    super(...args);
    UnkillableRunner.made.push(this);
  }
  override terminate(): Promise<TerminateResult> {
    return Promise.resolve({ exit: null, died: false });
  }
}

/** A runner whose kill takes `ms` before the signals go out (a GPU that takes its time to let go). */
function slowToKill(ms: number): (...args: ConstructorParameters<typeof RunnerProcess>) => RunnerProcess {
  return (...args) =>
    new (class extends RunnerProcess {
      override async terminate(graceMs?: number, killWaitMs?: number): Promise<TerminateResult> {
        await sleep(ms);
        return super.terminate(graceMs, killWaitMs);
      }
    })(...args);
}

export interface RigOptions {
  fastSynch?: boolean;
  runnerSeesFastSynch?: boolean;
  maxRestarts?: number;
  unkillable?: boolean;
  /** Delay before each terminate's signals. */
  slowKillMs?: number;
}

/** One emitted event and what the views said right after it. */
export interface Observation {
  event: string;
  state: RunnerState;
  lifecycle: InstanceLifecycle;
}

export interface SupervisorRig {
  supervisor: RunnerSupervisor;
  events: SupervisorEvent[];
  /** The accepted transitions so far, as `from>to`. */
  transitions(): string[];
  /** After each event: its name, the runner's state and the lifecycle word every view derives. */
  observations: Observation[];
  /** The fake runner's mode for the next spawn. */
  mode: { value: string };
  waitState(state: RunnerState, timeoutMs?: number): Promise<void>;
  waitEvent(match: (event: SupervisorEvent) => boolean, timeoutMs?: number): Promise<SupervisorEvent>;
  /** Writes one short generation task; returns its task id. */
  generate(): string;
}

const made: RunnerSupervisor[] = [];

function eventName(event: SupervisorEvent): string {
  if (event.type === 'state') return `state:${event.from}>${event.to}`;
  if (event.type === 'runner_status') return `runner_status:${event.status.kind}`;
  return event.type;
}

export function supervisorRig(mode: string, options: RigOptions = {}): SupervisorRig {
  const events: SupervisorEvent[] = [];
  const observations: Observation[] = [];
  const current = { value: mode };
  const listeners = new Set<() => void>();
  const createProcess = options.unkillable
    ? (...args: ConstructorParameters<typeof RunnerProcess>) => new UnkillableRunner(...args)
    : options.slowKillMs
      ? slowToKill(options.slowKillMs)
      : undefined;
  const supervisor: RunnerSupervisor = new RunnerSupervisor(
    {
      instanceId: 'fake',
      spawnSpec: () => ({
        command: process.execPath,
        args: [FAKE_RUNNER, current.value],
        env: { MLX_METAL_FAST_SYNCH: (options.runnerSeesFastSynch ?? options.fastSynch) ? '1' : '0' },
      }),
      expectedFastSynch: () => options.fastSynch ?? false,
      logDir: null,
      watchdog: { lifecycleMs: 5000, prefillMs: 400, decodeMs: 400, floorMs: 300, safetyFactor: 4 },
      rates: UNKNOWN_MODEL_PRIOR,
      restart: { baseDelayMs: 50, maxDelayMs: 200, maxRestarts: options.maxRestarts ?? 5 },
      ...(createProcess ? { createProcess } : {}),
    },
    (event) => {
      events.push(event);
      const state = supervisor.runnerState;
      // What the tray, the header, the API and the bundle derive from the snapshot's runner now.
      const runner = { ...instanceFixture().runner, state, status: supervisor.runnerStatus, attention: supervisor.attention, lastExit: supervisor.lastExit };
      observations.push({ event: eventName(event), state, lifecycle: instanceLifecycle(instanceFixture({ runner })) });
      for (const listener of [...listeners]) listener();
    },
  );
  made.push(supervisor);
  const until = <T>(check: () => T | undefined, timeoutMs: number, what: () => string): Promise<T> =>
    new Promise((resolve, reject) => {
      const done = (value: T) => {
        listeners.delete(listener);
        clearTimeout(timer);
        resolve(value);
      };
      const listener = () => {
        const value = check();
        if (value !== undefined) done(value);
      };
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(what()));
      }, timeoutMs);
      listeners.add(listener);
      listener();
    });
  const transitions = () => events.flatMap((e) => (e.type === 'state' ? [`${e.from}>${e.to}`] : []));
  return {
    supervisor,
    events,
    observations,
    mode: current,
    transitions,
    waitState: (state, timeoutMs = 10_000) =>
      until(
        () => (supervisor.runnerState === state ? true : undefined),
        timeoutMs,
        () => `no ${state}; transitions: ${transitions().join(', ')}`,
      ).then(() => undefined),
    waitEvent: (match, timeoutMs = 10_000) => {
      let seen = events.length;
      return until(
        () => {
          const found = events.slice(seen).find(match);
          seen = events.length;
          return found;
        },
        timeoutMs,
        () => `no such event; events: ${events.map(eventName).join(', ')}`,
      );
    },
    generate() {
      const taskId = supervisor.nextTaskId('gen');
      supervisor.submitGeneration({
        kind: 'TextGeneration',
        taskId,
        commandId: `cmd-${taskId}`,
        params: { messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, temperature: null, seed: null },
      });
      return taskId;
    },
  };
}

/**
 * Disposes every rig made so far and returns how many transitions their tables refused
 * (a supervisor bug if ever non-zero: every process-driven test asserts 0).
 */
export async function disposeRigs(): Promise<number> {
  const supervisors = made.splice(0);
  await Promise.all(supervisors.map((s) => s.dispose()));
  for (const proc of UnkillableRunner.made.splice(0)) proc.signalGroup('SIGKILL');
  return supervisors.reduce((sum, s) => sum + s.refusedTransitions, 0);
}
