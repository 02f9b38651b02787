/**
 * No request is ever stranded: a request handed to the dispatcher whose runner dies
 * before the task is written goes back to its queue (or fails with the rest of it), in
 * both dispatch modes. The case that deadlocked the blocking baseline: the 1B's request
 * waits behind a 3B acknowledgement, and the 1B runner is killed meanwhile.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import type { DispatchMode } from './dispatcher';
import { eventually, sleep } from '../../../test/support/eventually';

const SMALL = 'sim/llama-3.2-1b';
const LONG = 'sim/llama-3.2-3b';

describe.each<DispatchMode>(['nonblocking', 'blocking-baseline'])('no stranded request (%s)', (mode) => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('a runner killed while its request waits behind another model’s ack: every request ends, later ones are served', async () => {
    // The 1B comes back after the 3B's ack (~1.9 s): the baseline's turn for its request comes while it is down.
    fixture = createNodeFixture({ simTimeScale: 0.1, restart: { baseDelayMs: 2500 } }, { dispatchMode: mode });
    const { node } = fixture;
    const smallId = await fixture.launch(SMALL);
    await fixture.launch(LONG);

    const long = submitTracked(node, { model: LONG, messages: makePrompt(30_000, `long-${mode}`), maxTokens: 4 });
    await eventually(() => long.events.some((e) => e.type === 'prefill_progress'), 10_000, 'the long prefill under way');
    // Acknowledged only when the long prefill ends (~1.9 s at this scale): the baseline's loop waits for it.
    const queued3b = submitTracked(node, { model: LONG, messages: makePrompt(200, `queued-${mode}`), maxTokens: 4 });
    await sleep(100);
    const small = submitTracked(node, { model: SMALL, messages: makePrompt(20, `small-${mode}`), maxTokens: 200 });
    const phaseOfSmall = () =>
      node
        .snapshot()
        .instances.flatMap((i) => i.queue.requests)
        .find((r) => r.id === small.handle.id)?.phase;
    if (mode === 'blocking-baseline') {
      await sleep(50);
      expect(phaseOfSmall(), 'held by the baseline behind the 3B ack').toBe('queued');
    } else {
      // exobar writes it at once: the kill must come after the write, which a loaded machine can delay.
      await eventually(() => phaseOfSmall() !== 'queued', 10_000, "the 1B's task written");
    }

    const pid = localInstances(node.snapshot()).find((i) => i.id === smallId)!.runner.pid!;
    process.kill(pid, 'SIGKILL');
    const runnerPid = () => localInstances(node.snapshot()).find((i) => i.id === smallId)!.runner.pid;
    await eventually(() => runnerPid() !== pid, 5000, 'the node to see the 1B runner gone');
    const later = submitTracked(node, { model: SMALL, messages: makePrompt(20, `later-${mode}`), maxTokens: 4 });

    const outcomes = await Promise.all([long, queued3b, small, later].map((r) => r.handle.done));
    expect(outcomes.map((o) => o.type)).not.toContain(undefined);
    expect(outcomes[0]!.type).toBe('finished');
    expect(outcomes[1]!.type).toBe('finished');
    // Written before the kill (exobar) it fails with the crash; held by the baseline, it waits for the new runner.
    expect(outcomes[2]!.type).toBe(mode === 'blocking-baseline' ? 'finished' : 'failed');
    expect(outcomes[3]!.type).toBe('finished');
    // The node keeps serving both models after it.
    const after = [SMALL, LONG].map((model) => submitTracked(node, { model, messages: makePrompt(20, `after-${mode}`), maxTokens: 2 }));
    expect((await Promise.all(after.map((r) => r.handle.done))).map((o) => o.type)).toEqual(['finished', 'finished']);
  }, 60_000);
});
