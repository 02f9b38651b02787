/**
 * The runner's state machine: the table, then every transition driven by a real child
 * process (fake-runner.test-support.mjs) that fails the way each case needs.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RUNNER_STATES, type RunnerState } from '../../../shared/snapshot';
import { RunnerSupervisor, WEDGED_GPU_ADVICE, type SupervisorEvent } from './runner-supervisor';
import { canTransition, RUNNER_TRANSITIONS, RunnerStateMachine } from './runner-state-machine';
import { UNKNOWN_MODEL_PRIOR } from './runner-rates';
import { RunnerProcess, type TerminateResult } from './runner-process';

/** A runner stuck in the kernel (a wedged GPU): SIGTERM and SIGKILL do not end it. */
class UnkillableRunner extends RunnerProcess {
  static made: UnkillableRunner[] = [];
  constructor(...args: ConstructorParameters<typeof RunnerProcess>) {
    super(...args);
    UnkillableRunner.made.push(this);
  }
  override terminate(): Promise<TerminateResult> {
    return Promise.resolve({ exit: null, died: false });
  }
}

const FAKE_RUNNER = fileURLToPath(new URL('./fake-runner.test-support.mjs', import.meta.url));

describe('runner state table', () => {
  it('names every state, and only a retry or a relaunch leaves failed and needs_attention', () => {
    expect(Object.keys(RUNNER_TRANSITIONS).sort()).toEqual([...RUNNER_STATES].sort());
    expect(RUNNER_TRANSITIONS.failed).toEqual(['starting', 'stopped']);
    expect(RUNNER_TRANSITIONS.needs_attention).toEqual(['starting', 'stopped']);
    expect(canTransition('restarting', 'ready')).toBe(false);
  });

  it('refuses a transition the table does not allow, and reports each accepted one once', () => {
    const changes: string[] = [];
    const machine = new RunnerStateMachine((c) => changes.push(`${c.from}>${c.to}`));
    expect(machine.transition('ready', 'skip ahead')).toBe(false);
    expect(machine.refused).toBe(1);
    expect(machine.transition('starting', 'spawned')).toBe(true);
    expect(machine.transition('starting', 'again')).toBe(false);
    expect(changes).toEqual(['stopped>starting']);
  });
});

interface Rig {
  supervisor: RunnerSupervisor;
  events: SupervisorEvent[];
  transitions: () => string[];
  mode: { value: string };
  waitState(state: RunnerState, timeoutMs?: number): Promise<void>;
}

const rigs: RunnerSupervisor[] = [];

function rig(mode: string, options: { fastSynch?: boolean; runnerSeesFastSynch?: boolean; maxRestarts?: number; unkillable?: boolean } = {}): Rig {
  const events: SupervisorEvent[] = [];
  const current = { value: mode };
  const supervisor = new RunnerSupervisor(
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
      ...(options.unkillable ? { createProcess: (...args: ConstructorParameters<typeof RunnerProcess>) => new UnkillableRunner(...args) } : {}),
    },
    (event) => events.push(event),
  );
  rigs.push(supervisor);
  return {
    supervisor,
    events,
    mode: current,
    transitions: () => events.flatMap((e) => (e.type === 'state' ? [`${e.from}>${e.to}`] : [])),
    async waitState(state, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (supervisor.runnerState !== state) {
        if (Date.now() > deadline) throw new Error(`no ${state}; transitions: ${this.transitions().join(', ')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

const generation = (s: RunnerSupervisor) => {
  const taskId = s.nextTaskId('gen');
  s.submitGeneration({
    kind: 'TextGeneration',
    taskId,
    commandId: `cmd-${taskId}`,
    params: { messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, temperature: null, seed: null },
  });
  return taskId;
};

describe('runner state machine with a real runner process', () => {
  afterEach(async () => {
    await Promise.all(rigs.splice(0).map((s) => s.dispose()));
    for (const proc of UnkillableRunner.made.splice(0)) proc.signalGroup('SIGKILL');
  });

  it('starting → loading → warming_up → ready → running → ready → stopped', async () => {
    const r = rig('ok');
    r.supervisor.start();
    await r.waitState('ready');
    const taskId = generation(r.supervisor);
    expect(r.supervisor.runnerState).toBe('running');
    await r.waitState('ready');
    expect(r.events.some((e) => e.type === 'task_status' && e.taskId === taskId && e.status === 'Complete')).toBe(true);
    await r.supervisor.stop();
    expect(r.transitions()).toEqual([
      'stopped>starting',
      'starting>loading',
      'loading>warming_up',
      'warming_up>ready',
      'ready>running',
      'running>ready',
      'ready>stopped',
    ]);
  });

  it('a crash restarts with backoff (restarting, with restartAt), and the cap counts failures in the window, successes between them included', async () => {
    const r = rig('crash-on-generate', { maxRestarts: 1 });
    r.supervisor.start();
    await r.waitState('ready');
    generation(r.supervisor);
    await r.waitState('restarting');
    expect(r.supervisor.restartAt).toBeGreaterThan(Date.now() - 1000);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'crash', exitCode: 1 });
    await r.waitState('ready');
    generation(r.supervisor);
    await r.waitState('failed');
    expect(r.supervisor.attention).toMatch(/2 failures within 10 min/);
    expect(r.transitions()).toContain('running>restarting');
    expect(r.transitions()).toContain('restarting>starting');
    expect(r.transitions().at(-1)).toBe('running>failed');
    // The operator's retry starts over.
    r.mode.value = 'ok';
    expect(r.supervisor.retry()).toBe(true);
    await r.waitState('ready');
    expect(r.transitions()).toContain('failed>starting');
  });

  it('stuck with fast synch off: killed and restarted', async () => {
    const r = rig('hang-on-generate');
    r.supervisor.start();
    await r.waitState('ready');
    generation(r.supervisor);
    await r.waitState('restarting');
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck' });
    expect(r.events.find((e) => e.type === 'watchdog')).toMatchObject({ phase: 'prefill' });
  });

  it('stuck with fast synch on: killed and not relaunched; needs attention until the operator retries', async () => {
    const r = rig('hang-on-generate', { fastSynch: true });
    r.supervisor.start();
    await r.waitState('ready');
    generation(r.supervisor);
    await r.waitState('needs_attention');
    expect(r.supervisor.attention).toContain(WEDGED_GPU_ADVICE);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.supervisor.runnerState).toBe('needs_attention');
    expect(r.supervisor.restarts).toBe(0);
    r.mode.value = 'ok';
    expect(r.supervisor.retry()).toBe(true);
    await r.waitState('ready');
    expect(r.transitions()).toContain('needs_attention>starting');
  });

  it('stuck, fast synch off, but the process survives SIGKILL: not relaunched, needs attention, terminate said so', async () => {
    const r = rig('hang-on-generate', { unkillable: true });
    r.supervisor.start();
    await r.waitState('ready');
    generation(r.supervisor);
    await r.waitState('needs_attention');
    expect(r.supervisor.attention).toBe(`the stuck runner survived SIGKILL: ${WEDGED_GPU_ADVICE}`);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck', exitCode: null, signal: null });
    expect(r.supervisor.restarts).toBe(0);
  });

  const startupFailures: Array<[string, RegExp]> = [
    ['load-fails', /model not found: \/models\/missing \(no config\.json\)/],
    ['exit-before-hello', /No module named mlx_lm/],
    ['protocol-3', /protocol 3, exobar 1-2/],
  ];
  for (const [mode, words] of startupFailures) {
    it(`a start-up failure that would repeat (${mode}) fails at once with the runner's words, no retry`, async () => {
      const r = rig(mode);
      r.supervisor.start();
      await r.waitState('failed');
      expect(r.supervisor.lastExit).toMatchObject({ cause: 'startup_failed', message: expect.stringMatching(words) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(r.supervisor.restarts).toBe(0);
      expect(r.transitions().filter((t) => t === 'stopped>starting')).toHaveLength(1);
    });
  }

  it('a fast-synch mismatch fails at once too', async () => {
    // The runner sees fast synch on, the policy decided off.
    const r = rig('ok', { fastSynch: false, runnerSeesFastSynch: true });
    r.supervisor.start();
    await r.waitState('failed');
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'startup_failed', message: expect.stringMatching(/MLX_METAL_FAST_SYNCH=1/) });
    expect(r.supervisor.restarts).toBe(0);
  });
});
