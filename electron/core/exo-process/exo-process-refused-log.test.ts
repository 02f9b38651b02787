/**
 * A status change the exo process table refuses is a manager bug: besides the note in
 * exo's log folder and the bundle's transition log it is written once, at warn, to
 * exobar's own logger with from, to and cause; read back from the JSON lines that
 * logger writes, not from a stand-in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminalLogger } from '../terminal-log';
import type { StateMachine } from '../process/state-machine';
import type { ExoProcessStatus } from '../../../shared/exo-process';
import { ExoProcessManager, REFUSED_EXO_STATUS_CHANGE } from './exo-process-manager';

let dataDir: string | null = null;
afterEach(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
});

describe("the exo process manager's refused status change", () => {
  it('writes exactly one warn record per refusal with from, to and cause', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exobar-exo-refused-'));
    const lines: string[] = [];
    const logger = createTerminalLogger({ format: 'json', level: 'info', out: { write: (line: string) => lines.push(line) } });
    const manager = new ExoProcessManager({ dataDir, logger: logger.child({ component: 'exo-process' }) });
    // The manager never asks for a change its table refuses; a bug would, as this does.
    const machine = (manager as unknown as { store: { machine: StateMachine<ExoProcessStatus> } }).store.machine;
    expect(machine.transition('running', 'a bug: running without a start')).toBe(false);
    expect(machine.transition('stopping', 'a bug: stopping what never ran')).toBe(false);

    const refused = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r.msg === REFUSED_EXO_STATUS_CHANGE);
    const record = { level: 40, component: 'exo-process', from: 'idle' };
    expect(refused).toEqual([
      expect.objectContaining({ ...record, to: 'running', cause: 'a bug: running without a start' }),
      expect.objectContaining({ ...record, to: 'stopping', cause: 'a bug: stopping what never ran' }),
    ]);
    expect(manager.refusedTransitions).toBe(2);
    expect(manager.transitionLog.refused.map((c) => c.to)).toEqual(['running', 'stopping']);
    expect(manager.state().status).toBe('idle');
    await manager.shutdown();
  });
});
