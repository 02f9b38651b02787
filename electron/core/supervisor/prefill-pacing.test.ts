/**
 * The supervisor's side of prefill pacing (protocol 2): sent only to a runner whose
 * hello says it applies it, acknowledged as an event; a runner of protocol 1 is served
 * as before and never sent one. Real child processes: the built sim runner, and the
 * scripted fake runner, which speaks protocol 1.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { simRunnerSpec } from '../../../test/support/sim-runner-spec';
import { PROTOCOL_VERSION } from '../../../shared/runner-protocol';
import { RunnerSupervisor, type SupervisorEvent } from './runner-supervisor';
import { UNKNOWN_MODEL_PRIOR } from './runner-rates';
import type { SpawnSpec } from './spawn-spec';
import { sleep } from '../../../test/support/eventually';

const FAKE_RUNNER = fileURLToPath(new URL('../../../test/support/fake-runner.mjs', import.meta.url));
const supervisors: RunnerSupervisor[] = [];

function supervise(spawnSpec: () => SpawnSpec): { supervisor: RunnerSupervisor; events: SupervisorEvent[] } {
  const events: SupervisorEvent[] = [];
  const supervisor = new RunnerSupervisor(
    {
      instanceId: 'paced',
      spawnSpec,
      expectedFastSynch: () => false,
      logDir: null,
      watchdog: { lifecycleMs: 10_000, prefillMs: 2000, decodeMs: 2000, floorMs: 1000, safetyFactor: 4 },
      rates: UNKNOWN_MODEL_PRIOR,
      restart: { baseDelayMs: 50, maxDelayMs: 200, maxRestarts: 0 },
    },
    (event) => events.push(event),
  );
  supervisors.push(supervisor);
  return { supervisor, events };
}

async function until(what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('supervisor: prefill pacing', () => {
  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.dispose()));
  });

  it('sends a pacing to a runner of this protocol and reports its acknowledgement', async () => {
    const { supervisor, events } = supervise(() => {
      const spec = simRunnerSpec({ model: 'sim/llama-3.2-1b', timeScale: 0.05 });
      const env = Object.fromEntries(Object.entries(spec.env ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
      return { command: spec.command, args: spec.args, env };
    });
    supervisor.start();
    await until('ready', () => supervisor.serving);
    expect(supervisor.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(supervisor.supportsPacing).toBe(true);
    const pacingId = supervisor.setPrefillPacing({ chunkTokens: 256, pauseMs: 10 });
    expect(pacingId).toMatch(/^paced-pacing-/);
    await until('the acknowledgement', () => events.some((e) => e.type === 'pacing_applied'));
    expect(events.find((e) => e.type === 'pacing_applied')).toEqual({
      type: 'pacing_applied',
      pacingId,
      pacing: { chunkTokens: 256, pauseMs: 10 },
      commandId: null,
    });
  });

  it('serves a protocol-1 runner as before and sends it no pacing', async () => {
    const { supervisor, events } = supervise(() => ({ command: process.execPath, args: [FAKE_RUNNER, 'ok'], env: { MLX_METAL_FAST_SYNCH: '0' } }));
    supervisor.start();
    await until('ready', () => supervisor.serving);
    expect(supervisor.protocolVersion).toBe(1);
    expect(supervisor.supportsPacing).toBe(false);
    expect(supervisor.setPrefillPacing({ chunkTokens: 256, pauseMs: 10 })).toBeNull();
    expect(events.some((e) => e.type === 'pacing_applied')).toBe(false);
    expect(supervisor.malformedLines).toBe(0);
  });
});
