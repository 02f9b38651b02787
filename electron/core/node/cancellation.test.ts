/**
 * Cancellation is never lost (docs/architecture.md, invariant 2), with real sim runners. The
 * runner drops a cancel for a task it has not admitted (exo measured 0 of 2 stopped),
 * so the supervisor must hold it and send it on the acknowledgement.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import { requestIdOf } from '../events/node-event';
import { localInstances } from '../../../shared/instance-state';
import { eventually, sleep } from '../../../test/support/eventually';
import { CANCEL_CHECK_EVERY_STEPS } from '../../runners/sim/generation-engine';

const TIME_SCALE = 0.1;
const LONG = 'sim/llama-3.2-3b';

describe('cancellation', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('holds a cancel sent 1.5 s after queueing behind a long prompt, and stops the request at the next check', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const { node } = fixture;
    await fixture.launch(LONG);
    const long = submitTracked(node, { model: LONG, messages: makePrompt(30_000, 'long'), maxTokens: 4 });
    await sleep(50);
    const queued = submitTracked(node, { model: LONG, messages: makePrompt(300, 'queued'), maxTokens: 200 });
    await sleep(1500 * TIME_SCALE);

    expect(localInstances(node.snapshot())[0]!.queue.requests.find((r) => r.id === queued.handle.id)?.phase).toBe('awaiting_ack');
    expect(node.cancel(queued.handle.id)).toBe(true);

    const pending = localInstances(node.snapshot())[0]!.pendingCancels;
    expect(pending).toEqual([expect.objectContaining({ requestId: queued.handle.id, state: 'held' })]);
    expect(localInstances(node.snapshot())[0]!.queue.requests.find((r) => r.id === queued.handle.id)?.phase).toBe('cancelling');

    const outcome = await queued.handle.done;
    expect(outcome.type).toBe('cancelled');
    // Stopped at the first cancel check the runner makes after the cancel reaches it: the
    // first after admission (one token at most) on an idle machine; on a loaded one the line
    // can cross the pipes after that check, and the next comes 100 decode steps later. A lost
    // cancel would run all 200 tokens and finish.
    expect(queued.tokens).toBeLessThanOrEqual(CANCEL_CHECK_EVERY_STEPS + 1);
    expect((await long.handle.done).type).toBe('finished');
    const events = node
      .recentEvents()
      .filter((e) => requestIdOf(e) === queued.handle.id)
      .map((e) => e.kind);
    expect(events).toEqual(expect.arrayContaining(['cancel_held', 'request_acknowledged', 'cancel_sent', 'cancel_confirmed']));
    expect(events.indexOf('cancel_sent')).toBeGreaterThan(events.indexOf('request_acknowledged'));
    expect(localInstances(node.snapshot())[0]!.pendingCancels).toEqual([]);
  });

  it('sends a cancel for a decoding request at once and confirms it', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const { node } = fixture;
    await fixture.launch('sim/llama-3.2-1b');
    const request = submitTracked(node, { model: 'sim/llama-3.2-1b', messages: makePrompt(50), maxTokens: 5000 });
    await eventually(() => request.tokens >= 3, 10_000, 'decoding');
    node.cancel(request.handle.id);
    expect(localInstances(node.snapshot())[0]!.pendingCancels[0]?.state).toBe('sent');
    const outcome = await request.handle.done;
    expect(outcome.type).toBe('cancelled');
    // Cancels are checked every ~100 decode tokens.
    expect(request.tokens).toBeLessThan(300);
  });

  it('removes a request still queued in the node at once', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const { node } = fixture;
    const instance = await node.createInstance({ model: LONG, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    // The runner is still loading: the request waits in the node's queue, for the load.
    const request = submitTracked(node, { model: LONG, messages: makePrompt(10), maxTokens: 4 });
    expect(localInstances(node.snapshot())[0]!.queue.requests[0]?.phase).toBe('loading');
    node.cancel(request.handle.id);
    expect(request.events.at(-1)).toEqual({ type: 'cancelled', usage: { promptTokens: 10, completionTokens: 0 } });
    await node.waitForReady(instance.id);
    expect(localInstances(node.snapshot())[0]!.counters.cancelled).toBe(1);
  });

  it('answers false for an unknown request id', () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    expect(fixture.node.cancel('chatcmpl-nope')).toBe(false);
  });
});
