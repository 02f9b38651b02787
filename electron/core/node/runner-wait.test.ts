/**
 * Waiting in the runner is its own part of a time to first token: six short requests
 * sent at once to one sim runner are all acknowledged, then admitted one per step; the
 * sixth's wait behind the other five shows as "waiting in the runner", and its prefill
 * part is its own prompt's prefill only (docs/request-log.md, TTFT parts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';

const MODEL = 'sim/llama-3.2-1b';

describe('waiting in the runner', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('the sixth of six short requests: its wait behind the other five is runner wait, its prefill its own', async () => {
    fixture = createNodeFixture({ simTimeScale: 0.1 });
    const { node } = fixture;
    await fixture.launch(MODEL);
    const requests = Array.from({ length: 6 }, (_, i) => submitTracked(node, { model: MODEL, messages: makePrompt(9, `six-${i}`), maxTokens: 4 }));
    await Promise.all(requests.map((r) => r.handle.done));
    const byId = new Map(node.requestTimelines().map((t) => [t.requestId, t]));
    const timelines = requests.map((r) => byId.get(r.handle.id)!);
    const sixth = timelines[5]!;
    const earlier = timelines.slice(0, 5);
    const sample = sixth.ttft!;

    // The runner reported when its prefill began: after the five ahead of it had theirs.
    expect(sixth.prefillStartAt).not.toBeNull();
    for (const t of earlier) expect(sixth.prefillStartAt!).toBeGreaterThanOrEqual(t.prefillEndAt!);
    // Waiting in the runner: from its acknowledgement until its turn came.
    expect(sample.runnerWaitMs).toBeCloseTo(sixth.prefillStartAt! - sixth.acknowledgedAt!, 6);
    expect(sample.runnerWaitMs).toBeGreaterThan(0);
    // The prefill part is its own prompt's prefill: from its start to its last progress,
    // none of the five prefills ahead of it inside.
    expect(sample.prefillMs).toBeCloseTo(sixth.prefillEndAt! - sixth.prefillStartAt!, 6);
    const othersPrefillTotal = earlier.reduce((sum, t) => sum + (t.prefillEndAt! - t.prefillStartAt!), 0);
    expect(sample.runnerWaitMs!).toBeGreaterThanOrEqual(
      earlier.reduce((sum, t) => sum + Math.max(0, Math.min(t.prefillEndAt!, sixth.prefillStartAt!) - Math.max(t.prefillStartAt!, sixth.acknowledgedAt!)), 0),
    );
    expect(othersPrefillTotal).toBeGreaterThan(0);
    // The parts still add up to the whole.
    expect(sample.waitMs + sample.runnerWaitMs! + sample.prefillMs + sample.firstTokenMs).toBeCloseTo(sample.totalMs, 6);
  });
});
