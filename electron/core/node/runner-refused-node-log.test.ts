/**
 * The node hands exobar's logger to every runner it starts: a refused transition inside
 * the supervisor of a real sim runner, started through createNode, is written to that
 * logger with the node's instance id and model, and lands in the node's event log. The
 * wiring a typecheck alone could not show.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTerminalLogger } from '../terminal-log';
import type { RunnerStateMachine } from '../supervisor/runner-state-machine';
import { REFUSED_RUNNER_TRANSITION, RunnerSupervisor } from '../supervisor/runner-supervisor';
import { createNode } from './node';

const MODEL = 'sim/llama-3.2-1b';
let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

describe('a runner refusal through the node', () => {
  it("reaches exobar's logger with the node's instance id and model, once, and the node's event log", async () => {
    const lines: string[] = [];
    const logger = createTerminalLogger({ format: 'json', level: 'info', out: { write: (line: string) => lines.push(line) } });
    const start = vi.spyOn(RunnerSupervisor.prototype, 'start');
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-node-refused-'));
    const node = createNode({ dataDir, simTimeScale: 0.1, logger: logger.child({ component: 'runner' }) });
    cleanup = async () => {
      start.mockRestore();
      await node.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    };
    const instance = await node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await node.waitForReady(instance.id, 60_000);
    const supervisor = start.mock.contexts.at(-1) as RunnerSupervisor;
    // The supervisor never asks for a change its table refuses; a bug would, as this does.
    const machine = (supervisor as unknown as { machine: RunnerStateMachine }).machine;
    expect(machine.transition('loading', 'a bug: loading a ready runner')).toBe(false);

    const refused = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === REFUSED_RUNNER_TRANSITION);
    expect(refused).toEqual([
      expect.objectContaining({
        level: 40,
        component: 'runner',
        instanceId: instance.id,
        model: MODEL,
        from: 'ready',
        to: 'loading',
        cause: 'a bug: loading a ready runner',
      }),
    ]);
    expect(node.eventLog.all().filter((e) => e.kind === 'runner_state_refused')).toHaveLength(1);
  });
});
