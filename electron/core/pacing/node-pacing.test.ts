/**
 * The decode-first policy in a node with real sim runners on one simulated GPU: the 3B's
 * long prefill is paced while the 1B streams (its runner applies the pacing at a chunk
 * boundary of that prefill) and released when the stream ends; with the policy off
 * nothing is paced.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import type { PacingSnapshot } from '../../../shared/snapshot';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { sleep } from '../../../test/support/eventually';

const fixtures: NodeFixture[] = [];

afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.cleanup()));
});

async function run(policy: SharingPolicy) {
  // The ceiling is a budget of wall time: on a loaded machine it could run out before the
  // stream ends and release the pacing first (that release has its own test in
  // pacing-controller.test.ts). Here it stays out of the way.
  const fixture = createNodeFixture({ simTimeScale: 0.1, sharingPolicy: () => policy, pacingTuning: { ceiling: 100 } });
  fixtures.push(fixture);
  const { node } = fixture;
  const [a, b] = await Promise.all([fixture.launch('sim/llama-3.2-3b'), fixture.launch('sim/llama-3.2-1b')]);
  let bTokens = 0;
  const stream = node.submit({ model: 'sim/llama-3.2-1b', messages: makePrompt(20, 'b'), maxTokens: 100_000 }, (e) => {
    if (e.type === 'token') bTokens += 1;
  });
  // Enough solo gaps for B's solo ITL to be known: what its live ITL beside A's prefill is compared with.
  while (bTokens < 12) await sleep(5);
  const long = node.submit({ model: 'sim/llama-3.2-3b', messages: makePrompt(20_000, 'a'), maxTokens: 2 }, () => undefined);
  const pacingOf = (id: string) => {
    const snap = node.snapshot().instances.find((i) => i.id === id);
    return snap?.source === 'local' ? snap.pacing : undefined;
  };
  let pacingDuring: PacingSnapshot | null | undefined;
  if (policy === 'off') {
    // Well inside the prefill (about 1.3 s at this scale): nothing paced.
    await sleep(500);
    pacingDuring = pacingOf(a);
  } else {
    // The policy engages once B's live ITL beside A's prefill is measured: wait for the card to show it, then end the stream.
    await expect.poll(() => (pacingDuring = pacingOf(a)), { timeout: 20_000, interval: 5 }).toBeTruthy();
  }
  node.cancel(stream.id);
  await stream.done;
  expect((await long.done).type).toBe('finished');
  const events = node.eventLog.all().filter((e) => e.kind === 'pacing_engaged' || e.kind === 'pacing_released');
  return { events, a, b, stdout: node.runnerLogs(a)!.stdout, pacingDuring, pacingAfter: pacingOf(a) };
}

describe('sharing policy in a node (sim runners)', () => {
  it('decode_first paces the prefill while the neighbour streams and releases it when the stream ends', async () => {
    const { events, a, stdout, pacingDuring, pacingAfter } = await run('decode_first');
    // What the card shows: paced while the stream ran, beside whom; nothing after.
    expect(pacingDuring).toMatchObject({ neighbours: ['Llama 3.2 1B (simulated)'], pauseMs: expect.any(Number) });
    expect(pacingDuring!.chunkTokens).toBeLessThan(4096);
    expect(pacingDuring!.trigger).toMatchObject({ neighbour: 'Llama 3.2 1B (simulated)', ratio: expect.any(Number) });
    expect(pacingAfter).toBeNull();
    // Engaged, and released each time: when B's ITL recovered under pacing (it may, more than once), and when B stopped.
    const kinds = events.map((e) => e.kind);
    expect(kinds.length % 2).toBe(0);
    expect(kinds).toEqual(kinds.map((_, i) => (i % 2 === 0 ? 'pacing_engaged' : 'pacing_released')));
    expect(events[0]).toMatchObject({ instanceId: a, data: { model: 'Llama 3.2 3B (simulated)', neighbours: ['Llama 3.2 1B (simulated)'] } });
    // Engaged because the sim's shared GPU really slowed B's stream beside the prefill (its time-slicing model).
    const trigger = events[0]!.kind === 'pacing_engaged' ? events[0]!.data.trigger : undefined;
    expect(trigger?.neighbour).toBe('Llama 3.2 1B (simulated)');
    expect(trigger!.ratio).toBeGreaterThanOrEqual(1.2);
    const reasons = events.flatMap((e) => (e.kind === 'pacing_released' ? [e.data.reason] : []));
    expect(reasons.at(-1)).toBe('neighbour_stopped');
    expect(new Set(reasons.slice(0, -1))).toEqual(new Set(reasons.length > 1 ? ['neighbour_recovered'] : []));
    expect(events.every((e) => e.instanceId === a)).toBe(true);
    // The runner applied each pacing inside that prefill, and full speed after each release.
    const applied = stdout.split('\n').filter((line) => line.includes('"PrefillPacingApplied"'));
    expect(applied.length).toBe(events.length);
    expect(applied[0]).toMatch(/"commandId":"chatcmpl-/);
    expect(applied.at(-1)).toMatch(/"chunkTokens":null,"pauseMs":0/);
  }, 60_000);

  it('off paces nothing', async () => {
    const { events, stdout, pacingDuring } = await run('off');
    expect(events).toEqual([]);
    expect(pacingDuring).toBeNull();
    expect(stdout).not.toContain('PrefillPacingApplied');
  }, 60_000);
});
