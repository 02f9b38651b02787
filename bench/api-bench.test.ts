/**
 * The API benchmarks run end to end on a small scale: the API's added latency is
 * small next to the node's own TTFT, streaming through the API keeps up with the
 * node, and exo's stall scenario through the official client shows no stall.
 */
import { describe, expect, it } from 'vitest';
import { measureApiOverhead } from './api-overhead';
import { measureApiStall } from './api-stall-scenario';

describe('API benchmarks', () => {
  it('measures the added latency and the streaming throughput', async () => {
    const result = await measureApiOverhead({ timeScale: 0.1, overheadRequests: 12, streamsPerModel: 2, streamTokens: 24 });
    expect(result.api_overhead_requests).toBe(12);
    // Measured, not judged: a loaded machine moves milliseconds, and `npm run bench`
    // reports the figure against its target (< 5 ms).
    expect(Number.isFinite(result.api_overhead_ms_median)).toBe(true);
    expect(Object.keys(result.api_overhead_ms_median_by_dialect).sort()).toEqual(
      ['anthropic-messages', 'ollama-chat', 'ollama-generate', 'openai-chat', 'openai-completions', 'openai-responses'],
    );
    for (const ms of Object.values(result.api_overhead_ms_median_by_dialect)) expect(Number.isFinite(ms)).toBe(true);
    expect(result.client_ttft_ms_median).toBeGreaterThan(result.node_ttft_ms_median - 1);
    expect(result.stream_tokens_per_s).toBeGreaterThan(0);
    expect(result.stream.api_over_node).toBeGreaterThan(0.5);
  });

  it('a queued 3B request does not stall the 1B through the API (the supervisor-stall scenario)', async () => {
    const result = await measureApiStall(0.1, 1);
    const { busy, queued } = result.ttft;
    // A blocking supervisor would hold the 1B for the rest of the 3B's ~19 s prefill
    // (exo measured 15.1-15.7 s against 0.38-0.40 s busy); exobar stays near busy,
    // both measured side by side in this run.
    expect(queued.median_s).toBeLessThan(busy.median_s * 2);
  });
});
