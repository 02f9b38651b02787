/**
 * GPU sharing measured live with real sim-runner processes: the 1B streams a long
 * answer, the 3B prefills a long prompt part-way through; the 1B's `sharing` object and
 * its request record file its inter-token gaps as solo and as "beside the 3B's prefill".
 * (The sim's decode under sharing is not calibrated: only the filing is asserted here.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import { sleep } from '../../../test/support/eventually';

describe('GPU sharing, live', () => {
  let fx: NodeFixture;
  let small: string;
  let medium: string;

  beforeAll(async () => {
    fx = createNodeFixture({ simTimeScale: 1 });
    [small, medium] = await Promise.all([fx.launch('sim/llama-3.2-1b'), fx.launch('sim/llama-3.2-3b')]);
  }, 60_000);
  afterAll(() => fx?.cleanup());

  it("files the 1B's gaps as solo and beside the 3B's prefill, in the snapshot and the request record", async () => {
    const b = submitTracked(fx.node, { model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'tell a story' }], maxTokens: 600 });
    while (b.tokens < 60) await sleep(20);
    const a = submitTracked(fx.node, { model: 'sim/llama-3.2-3b', messages: makePrompt(12_000, 'sharing-live'), maxTokens: 4 });
    await Promise.all([a.handle.done, b.handle.done]);
    const sharing = (fx.node.snapshot().instances.find((i) => i.id === small) as LocalInstanceSnapshot).sharing;
    expect(sharing.observed).toBe('all');
    expect(sharing.solo.gaps).toBeGreaterThan(50);
    const prefill = sharing.neighbours.find((n) => n.instanceId === medium && n.phase === 'prefilling');
    expect(prefill?.gaps).toBeGreaterThan(5);
    expect(prefill?.modelName).toBe('Llama 3.2 3B (simulated)');
    expect(prefill?.decodeRatio).toBeGreaterThan(0);
    const record = fx.node.requestTimelines().find((t) => t.requestId === b.handle.id)!;
    expect(record.decodeSharing.soloGaps).toBe(sharing.solo.gaps);
    expect(record.decodeSharing.neighbours.find((n) => n.phase === 'prefilling')?.gaps).toBe(prefill!.gaps);
    // The 3B decoded its own four tokens alone or beside the 1B: its record says so too.
    const aRecord = fx.node.requestTimelines().find((t) => t.requestId === a.handle.id)!;
    expect(aRecord.decodeSharing.soloGaps + aRecord.decodeSharing.neighbours.reduce((n, x) => n + x.gaps, 0)).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
