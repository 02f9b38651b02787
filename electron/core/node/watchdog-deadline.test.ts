/**
 * The watchdog's adaptive deadline against real sim runners, with the default limits
 * (docs/operations.md, "Watchdog"), at time scale 0.1: every duration is a tenth of
 * its calibrated value, the floor too (5 s becomes its 1 s minimum of real time).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_PROMPTS } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture, type TrackedRequest } from '../../../test/support/node-fixture';
import type { NodeEventOf } from './node-event';
import { eventually, sleep } from '../../../test/support/eventually';

const TIME_SCALE = 0.1;
const SMALL = 'sim/llama-3.2-1b';
const LONG = 'sim/llama-3.2-3b';
const hangPrompt = [{ role: 'user' as const, content: `please ${FAULT_PROMPTS.hang} now` }];

describe('adaptive watchdog deadline', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('ends the stream of a runner hung on a short prompt within 15 s (scaled), while the other model streams', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE, restart: { baseDelayMs: 100 } });
    const { node } = fixture;
    await fixture.launch(SMALL);
    await fixture.launch(LONG);
    const streaming = submitTracked(node, { model: SMALL, messages: makePrompt(20, 'streaming'), maxTokens: 100_000 });
    await eventually(() => streaming.tokens > 0, 10_000, 'the 1B streaming');
    const hung = submitTracked(node, { model: LONG, messages: hangPrompt, maxTokens: 50 });
    const outcome = await hung.handle.done;
    const endedAfterMs = performance.now() - hung.submittedAt;
    expect(outcome).toMatchObject({ type: 'failed', error: { code: 'runner_stuck' } });
    expect(endedAfterMs).toBeLessThan(15_000 * TIME_SCALE);
    expect(streaming.events.some((e) => e.type === 'failed')).toBe(false);
    node.cancel(streaming.handle.id);
  }, 30_000);

  it('never kills a legitimate 60k-token prefill on the 3B while the 1B streams', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const { node } = fixture;
    await fixture.launch(SMALL);
    await fixture.launch(LONG);
    const streaming = submitTracked(node, { model: SMALL, messages: makePrompt(20, 'streaming'), maxTokens: 100_000 });
    await eventually(() => streaming.tokens > 0, 10_000, 'the 1B streaming');
    const long = submitTracked(node, { model: LONG, messages: makePrompt(60_000, 'long-60k'), maxTokens: 4 });
    const outcome = await long.handle.done;
    expect(outcome.type).toBe('finished');
    expect(node.recentEvents().filter((e) => e.kind === 'watchdog_fired')).toEqual([]);
    // It did share the GPU all along, and took its calibrated ~38 s (scaled) or more.
    expect(streaming.events.some((e) => e.type === 'failed' || e.type === 'finished')).toBe(false);
    expect(performance.now() - long.submittedAt).toBeGreaterThan(0.9 * (60_000 / 1590) * 1000 * TIME_SCALE);
    node.cancel(streaming.handle.id);
    await streaming.handle.done;
  }, 60_000);

  it('catches a hung runner within its deadline under a request every 1.5 s (scaled)', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE, restart: { baseDelayMs: 100 } });
    const { node } = fixture;
    await fixture.launch(SMALL);
    const hung = submitTracked(node, { model: SMALL, messages: hangPrompt, maxTokens: 50 });
    const traffic: TrackedRequest[] = [];
    let stop = false;
    const feeder = (async () => {
      while (!stop) {
        await sleep(1500 * TIME_SCALE);
        if (!stop) traffic.push(submitTracked(node, { model: SMALL, messages: makePrompt(20, `t${traffic.length}`), maxTokens: 4 }));
      }
    })();
    const outcome = await hung.handle.done;
    stop = true;
    await feeder;
    expect(outcome.type).toBe('failed');
    const fired = node.recentEvents().find((e): e is NodeEventOf<'watchdog_fired'> => e.kind === 'watchdog_fired')!;
    expect(fired).toBeDefined();
    // Traffic kept arriving during the silence, and did not push the deadline back.
    expect(traffic.length).toBeGreaterThanOrEqual(Math.floor(fired.data.deadlineMs / (1500 * TIME_SCALE)));
    // Caught within a check interval (at most a fifth of the floor) of its deadline.
    expect(fired.data.silentMs).toBeLessThan(fired.data.deadlineMs + 500 * TIME_SCALE * 5);
    expect(performance.now() - hung.submittedAt).toBeLessThan(fired.data.deadlineMs + 2000);
    await Promise.all(traffic.map((t) => t.handle.done));
  }, 30_000);
});
