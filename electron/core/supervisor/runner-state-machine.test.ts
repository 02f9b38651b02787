/**
 * The runner's state machine: the table as a pure unit, then whole transition sequences
 * driven by a real child process (test/support/fake-runner.mjs) that fails the way each
 * case needs, as llama-swap's process tests assert them. Every process-driven test ends
 * with no refused transition.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RUNNER_STATES } from '../../../shared/snapshot';
import { disposeRigs, supervisorRig } from '../../../test/support/supervisor-rig';
import { WEDGED_GPU_ADVICE } from './runner-supervisor';
import { canTransition, RUNNER_TRANSITIONS, RunnerStateMachine, type RunnerStateChange } from './runner-state-machine';
import { sleep } from '../../../test/support/eventually';

describe('runner state table', () => {
  it('names every state, and only a retry or a relaunch (which stops first) leaves failed and needs_attention', () => {
    expect(Object.keys(RUNNER_TRANSITIONS).sort()).toEqual([...RUNNER_STATES].sort());
    expect(RUNNER_TRANSITIONS.failed).toEqual(['starting', 'stopping']);
    expect(RUNNER_TRANSITIONS.needs_attention).toEqual(['starting', 'stopping']);
    expect(canTransition('restarting', 'ready')).toBe(false);
  });

  it('every state but stopped reaches stopping, and stopping only reaches stopped', () => {
    for (const state of RUNNER_STATES) if (state !== 'stopped' && state !== 'stopping') expect(canTransition(state, 'stopping'), state).toBe(true);
    expect(RUNNER_TRANSITIONS.stopping).toEqual(['stopped']);
  });

  it('a death goes through down before the policy decides; serving states never skip it', () => {
    for (const state of ['starting', 'loading', 'warming_up', 'ready', 'running', 'draining'] as const) {
      expect(canTransition(state, 'down'), state).toBe(true);
      for (const decided of ['restarting', 'failed', 'needs_attention'] as const) expect(canTransition(state, decided), `${state}>${decided}`).toBe(false);
    }
    expect(RUNNER_TRANSITIONS.down).toEqual(['restarting', 'failed', 'needs_attention', 'stopping']);
  });

  it('refuses a transition the table does not allow: counted, recorded with its time, reported; each accepted one reported once', () => {
    const changes: string[] = [];
    const refused: RunnerStateChange[] = [];
    const machine = new RunnerStateMachine({ changed: (c) => changes.push(`${c.from}>${c.to}`), refused: (c) => refused.push(c) }, () => 1234);
    expect(machine.transition('ready', 'skip ahead')).toBe(false);
    expect(machine.refused).toBe(1);
    expect(refused).toEqual([{ from: 'stopped', to: 'ready', reason: 'skip ahead', at: 1234 }]);
    expect(machine.refusals).toEqual(refused);
    expect(machine.transition('starting', 'spawned')).toBe(true);
    expect(machine.transition('starting', 'again')).toBe(false);
    expect(machine.refused).toBe(1);
    expect(changes).toEqual(['stopped>starting']);
    expect(machine.history).toEqual([{ from: 'stopped', to: 'starting', reason: 'spawned', at: 1234 }]);
  });
});

describe('runner state machine with a real runner process', () => {
  afterEach(async () => {
    expect(await disposeRigs(), 'refused transitions').toBe(0);
  });

  it('start, load, ready, a request, stop: the whole sequence', async () => {
    const r = supervisorRig('ok');
    r.supervisor.start();
    await r.waitState('ready');
    const taskId = r.generate();
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
      'ready>stopping',
      'stopping>stopped',
    ]);
    expect(r.supervisor.transitionLog.accepted.map((c) => c.at)).toEqual([...r.supervisor.transitionLog.accepted.map((c) => c.at)].sort((a, b) => a - b));
  });

  it('a stop with requests in flight: stopping before the Shutdown, the requests lost with cause stopped', async () => {
    const r = supervisorRig('hang-on-generate');
    r.supervisor.start();
    await r.waitState('ready');
    const taskId = r.generate();
    await r.waitEvent((e) => e.type === 'ack');
    await r.supervisor.stop();
    expect(r.events.find((e) => e.type === 'task_lost')).toMatchObject({ taskId, cause: 'stopped' });
    expect(r.transitions().slice(-3)).toEqual(['ready>running', 'running>stopping', 'stopping>stopped']);
    const shutdown = r.observations.findIndex((o) => o.event === 'runner_status:RunnerShuttingDown');
    expect(r.observations[shutdown]).toMatchObject({ state: 'stopping', lifecycle: 'stopping' });
  });

  it('a crash restarts with backoff by cause (down, restarting with restartAt), and the cap counts failures in the window', async () => {
    const r = supervisorRig('crash-on-generate', { maxRestarts: 1 });
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitState('restarting');
    expect(r.supervisor.restartAt).toBeGreaterThan(Date.now() - 1000);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'crashed', exitCode: 1 });
    expect(r.events.find((e) => e.type === 'down')).toMatchObject({ cause: 'crashed', willRestartInMs: 50 });
    await r.waitState('ready');
    r.generate();
    await r.waitState('failed');
    expect(r.supervisor.attention).toMatch(/2 failures within 10 min/);
    const deaths = ['ready>running', 'running>down'];
    expect(r.transitions()).toEqual([
      'stopped>starting',
      'starting>loading',
      'loading>warming_up',
      'warming_up>ready',
      ...deaths,
      'down>restarting',
      'restarting>starting',
      'starting>loading',
      'loading>warming_up',
      'warming_up>ready',
      ...deaths,
      'down>failed',
    ]);
    const reasons = r.supervisor.transitionLog.accepted.filter((c) => c.to === 'starting').map((c) => c.reason);
    expect(reasons).toEqual(['started', 'restart after crashed']);
  });

  it('the retry of a failed runner starts over', async () => {
    const r = supervisorRig('crash-on-generate', { maxRestarts: 0 });
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitState('failed');
    r.mode.value = 'ok';
    expect(r.supervisor.retry()).toBe(true);
    await r.waitState('ready');
    expect(r.transitions().slice(-4)).toEqual(['failed>starting', 'starting>loading', 'loading>warming_up', 'warming_up>ready']);
    expect(r.supervisor.transitionLog.accepted.at(-4)?.reason).toBe('the operator retried');
    expect(r.supervisor.retry()).toBe(false);
  });

  it('a watchdog kill with fast synch off: down, then a restart after stuck', async () => {
    const r = supervisorRig('hang-on-generate');
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitState('restarting');
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck' });
    expect(r.events.find((e) => e.type === 'watchdog')).toMatchObject({ phase: 'prefill' });
    expect(r.transitions().slice(-3)).toEqual(['ready>running', 'running>down', 'down>restarting']);
    await r.waitState('starting');
    expect(r.supervisor.transitionLog.accepted.at(-1)?.reason).toBe('restart after stuck');
  });

  it('stuck with fast synch on: killed, needs attention and not relaunched until the operator retries', async () => {
    const r = supervisorRig('hang-on-generate', { fastSynch: true });
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitState('needs_attention');
    expect(r.supervisor.attention).toContain(WEDGED_GPU_ADVICE);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck' });
    expect(r.transitions().slice(-2)).toEqual(['running>down', 'down>needs_attention']);
    const spawns = r.events.filter((e) => e.type === 'spawned').length;
    // The restart back-off is 50 ms: a relaunch, were it coming, would have spawned by now.
    await sleep(300);
    expect(r.events.filter((e) => e.type === 'spawned')).toHaveLength(spawns);
    expect(r.supervisor.runnerState).toBe('needs_attention');
    expect(r.supervisor.restarts).toBe(0);
    r.mode.value = 'ok';
    expect(r.supervisor.retry()).toBe(true);
    await r.waitState('ready');
    expect(r.transitions()).toContain('needs_attention>starting');
  });

  it('stuck, fast synch off, but the process survives SIGKILL: not relaunched, needs attention, terminate said so', async () => {
    const r = supervisorRig('hang-on-generate', { unkillable: true });
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitState('needs_attention');
    expect(r.supervisor.attention).toBe(`the stuck runner survived SIGKILL: ${WEDGED_GPU_ADVICE}`);
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'stuck', exitCode: null, signal: null });
    expect(r.supervisor.restarts).toBe(0);
  });

  const startupFailures: Array<[string, RegExp, string[]]> = [
    ['load-fails', /model not found: \/models\/missing \(no config\.json\)/, ['stopped>starting', 'starting>loading', 'loading>down', 'down>failed']],
    ['exit-before-hello', /No module named mlx_lm/, ['stopped>starting', 'starting>down', 'down>failed']],
    ['protocol-4', /protocol 4, exobar 1-3/, ['stopped>starting', 'starting>down', 'down>failed']],
  ];
  for (const [mode, words, sequence] of startupFailures) {
    it(`a start-up failure that would repeat (${mode}) fails at once with the runner's words, no retry`, async () => {
      const r = supervisorRig(mode);
      r.supervisor.start();
      await r.waitState('failed');
      expect(r.supervisor.lastExit).toMatchObject({ cause: 'startup_failed', message: expect.stringMatching(words) });
      expect(r.supervisor.restarts).toBe(0);
      expect(r.transitions()).toEqual(sequence);
    });
  }

  it('a fast-synch mismatch fails at once too', async () => {
    // The runner sees fast synch on, the policy decided off.
    const r = supervisorRig('ok', { fastSynch: false, runnerSeesFastSynch: true });
    r.supervisor.start();
    await r.waitState('failed');
    expect(r.supervisor.lastExit).toMatchObject({ cause: 'startup_failed', message: expect.stringMatching(/MLX_METAL_FAST_SYNCH=1/) });
    expect(r.supervisor.restarts).toBe(0);
    expect(r.transitions()).toEqual(['stopped>starting', 'starting>down', 'down>failed']);
  });

  it('a relaunch drains (no new requests taken), then stops and starts again', async () => {
    const r = supervisorRig('ok');
    r.supervisor.start();
    await r.waitState('ready');
    expect(r.supervisor.drain()).toBe(true);
    expect(r.supervisor.serving).toBe(false);
    expect(r.observations.at(-1)).toMatchObject({ state: 'draining', lifecycle: 'restarting' });
    await r.supervisor.relaunch();
    await r.waitState('ready');
    expect(r.transitions().slice(4)).toEqual([
      'ready>draining',
      'draining>stopping',
      'stopping>stopped',
      'stopped>starting',
      'starting>loading',
      'loading>warming_up',
      'warming_up>ready',
    ]);
  });
});
