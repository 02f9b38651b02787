/**
 * The alerts against what a real node emits: a sim runner hung by the fault prompt is
 * found by the watchdog and restarted, and the snapshots the node publishes meanwhile
 * make the "stuck and restarted" notification fire.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_PROMPTS } from '../../shared/runner-protocol';
import type { Snapshot } from '../../shared/snapshot';
import { createNodeFixture, type NodeFixture } from '../../test/support/node-fixture';
import { operatorAlerts, type OperatorAlert } from './operator-alerts';
import { eventually } from '../../test/support/eventually';

describe('operator alerts from a real node', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('a hung runner restarted by the watchdog raises "was stuck and was restarted"', async () => {
    fixture = createNodeFixture({ simTimeScale: 0.1, restart: { baseDelayMs: 300 } });
    const { node } = fixture;
    const id = await fixture.launch('sim/llama-3.2-1b');
    const alerts: OperatorAlert[] = [];
    let prev: Snapshot | null = node.snapshot();
    const stop = node.onSnapshot((snap) => {
      alerts.push(...operatorAlerts(prev, snap));
      prev = snap;
    }, 0);
    const hung = node.submit(
      { model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: `please ${FAULT_PROMPTS.hang} now` }], maxTokens: 8 },
      () => undefined,
    );
    expect((await hung.done).type).toBe('failed');
    await node.waitForReady(id, 20_000);
    await eventually(() => alerts.length > 0, 5000, 'an alert');
    stop();
    expect(alerts.map((a) => [a.kind, a.title])).toEqual([['runner_restarted', 'Llama 3.2 1B (simulated) was stuck and was restarted']]);
  }, 30_000);
});
