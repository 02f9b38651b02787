/**
 * Per-request decode figures through a real sim runner: the snapshot's request entry
 * while it decodes and the node's request record once it ended carry measured decode
 * tokens/s and inter-token latency.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';

describe('per-request decode figures', () => {
  let fx: NodeFixture;
  let instanceId: string;

  beforeAll(async () => {
    fx = createNodeFixture({ simTimeScale: 1 });
    instanceId = await fx.launch('sim/llama-3.2-1b');
  }, 60_000);
  afterAll(() => fx?.cleanup());

  it('measures decode tokens/s and ITL p50/p95 for a request, live and in its record', async () => {
    const seen: string[] = [];
    const stop = fx.node.onSnapshot((s) => {
      const instance = s.instances.find((i) => i.id === instanceId) as LocalInstanceSnapshot | undefined;
      const entry = instance?.queue.requests[0];
      if (entry?.phase === 'decoding' && entry.decodeTokensPerSecond !== null) seen.push(`${entry.decodeTokensPerSecond}:${entry.itlP50Ms}:${entry.itlP95Ms}`);
    }, 0);
    const tracked = submitTracked(fx.node, { model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hello there' }], maxTokens: 120 });
    await tracked.handle.done;
    stop();
    expect(tracked.tokens).toBe(120);
    expect(seen.length).toBeGreaterThan(0);
    const record = fx.node.requestTimelines().find((t) => t.requestId === tracked.handle.id)!;
    // The calibrated sim steps every 4 ms (one stream): about 250 tokens/s, gaps near 4 ms.
    expect(record.decodeTokensPerSecond).toBeGreaterThan(50);
    expect(record.decodeTokensPerSecond).toBeLessThan(400);
    // On a loaded machine the node may read several tokens in one pipe read (gaps near 0),
    // so the median can collapse; the slow end cannot: p95 is at least a step.
    expect(record.itlP50Ms).not.toBeNull();
    expect(record.itlP95Ms).toBeGreaterThan(1);
    expect(record.itlP95Ms).toBeGreaterThanOrEqual(record.itlP50Ms!);
    const span = record.endedAt! - record.firstTokenAt!;
    // Rate and span agree: 119 gaps over about the decode span (the end comes just after the last token).
    expect(record.decodeTokensPerSecond! * (span / 1000)).toBeGreaterThan(100);
    expect(record.decodeTokensPerSecond! * (span / 1000)).toBeLessThan(130);
  }, 30_000);
});
