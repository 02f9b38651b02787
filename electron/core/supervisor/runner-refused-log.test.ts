/**
 * A transition the runner's table refuses is a supervisor bug: besides the
 * `state_refused` event (the node's event log, the bundle) it is written once, at warn,
 * to exobar's own logger, naming the instance, its model, from, to and cause; read back
 * from the JSON lines that logger writes, not from a stand-in.
 */
import { describe, expect, it } from 'vitest';
import { createTerminalLogger } from '../terminal-log';
import { UNKNOWN_MODEL_PRIOR } from './runner-rates';
import type { RunnerStateMachine } from './runner-state-machine';
import { REFUSED_RUNNER_TRANSITION, RunnerSupervisor, type SupervisorEvent } from './runner-supervisor';

describe("a runner supervisor's refused transition", () => {
  it('writes exactly one warn record per refusal with the instance, model, from, to and cause', async () => {
    const lines: string[] = [];
    const logger = createTerminalLogger({ format: 'json', level: 'info', out: { write: (line: string) => lines.push(line) } });
    const events: SupervisorEvent[] = [];
    const supervisor = new RunnerSupervisor(
      {
        instanceId: 'inst-refused',
        model: 'sim/llama-3.2-1b',
        logger: logger.child({ component: 'runner' }),
        spawnSpec: () => ({ command: process.execPath, args: ['-e', ''], env: {} }),
        expectedFastSynch: () => false,
        logDir: null,
        watchdog: { lifecycleMs: 5000, prefillMs: 400, decodeMs: 400, floorMs: 300, safetyFactor: 4 },
        rates: UNKNOWN_MODEL_PRIOR,
        restart: { baseDelayMs: 50, maxDelayMs: 200, maxRestarts: 0 },
      },
      (event) => events.push(event),
    );
    // The supervisor never asks for a change its table refuses; a bug would, as this does.
    const machine = (supervisor as unknown as { machine: RunnerStateMachine }).machine;
    expect(machine.transition('ready', 'a bug: ready without a start')).toBe(false);
    expect(machine.transition('running', 'a bug: running without a start')).toBe(false);

    const refused = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === REFUSED_RUNNER_TRANSITION);
    const record = { level: 40, component: 'runner', instanceId: 'inst-refused', model: 'sim/llama-3.2-1b', from: 'stopped' };
    expect(refused).toEqual([
      expect.objectContaining({ ...record, to: 'ready', cause: 'a bug: ready without a start' }),
      expect.objectContaining({ ...record, to: 'running', cause: 'a bug: running without a start' }),
    ]);
    expect(supervisor.refusedTransitions).toBe(2);
    expect(events.filter((e) => e.type === 'state_refused')).toHaveLength(2);
    expect(supervisor.runnerState).toBe('stopped');
    await supervisor.stop();
  });
});
