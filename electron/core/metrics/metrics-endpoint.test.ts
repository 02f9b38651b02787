/**
 * `GET /metrics` on the real core with sim runners, driven by the official OpenAI
 * client: the token rule, and figures that agree with the snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import { defaultSettings } from '../../../shared/api';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';

/** The value of one series in Prometheus' text format (labels in any order); null when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return null;
}

describe('GET /metrics', () => {
  let rig: CoreRig;
  let publicMetrics = false;

  beforeAll(async () => {
    rig = await startCoreRig({ getSettings: () => ({ ...defaultSettings(), metrics: { public: publicMetrics } }) });
    await rig.launch('sim/llama-3.2-1b');
  });
  afterAll(() => rig?.close());

  it('needs the bearer token unless metrics.public is on (this server is on loopback)', async () => {
    expect((await fetch(`${rig.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${rig.url}/metrics`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await fetch(`${rig.url}/metrics`, { headers: { Authorization: `Bearer ${rig.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    publicMetrics = true;
    expect((await fetch(`${rig.url}/metrics`)).status).toBe(200);
    publicMetrics = false;
    expect((await fetch(`${rig.url}/metrics`)).status).toBe(401);
  });

  it('counts requests by outcome and observes TTFT as the snapshot shows them', async () => {
    for (let i = 0; i < 3; i++) {
      await rig.client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: `hello ${i}` }], max_tokens: 4 });
    }
    // A cancelled one: the stream is dropped after its first token.
    const stream = await rig.client.chat.completions.create({
      model: 'sim/llama-3.2-1b',
      messages: [{ role: 'user', content: 'a longer answer please' }],
      // Long enough that the cancel lands before the end on a loaded machine.
      max_tokens: 4000,
      stream: true,
    });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) break;
    stream.controller.abort();
    await expect.poll(() => localInstances(rig.node.snapshot())[0]?.counters.cancelled, { timeout: 10_000 }).toBe(1);

    const text = await (await fetch(`${rig.url}/metrics`, { headers: { Authorization: `Bearer ${rig.token}` } })).text();
    const instance = localInstances(rig.node.snapshot())[0]!;
    const labels = { model: 'sim/llama-3.2-1b', instance: instance.id, source: 'local' };
    expect(sample(text, 'exobar_requests_total', { ...labels, outcome: 'done' })).toBe(instance.counters.completed);
    expect(sample(text, 'exobar_requests_total', { ...labels, outcome: 'cancelled' })).toBe(1);
    expect(sample(text, 'exobar_ttft_seconds_count', labels)).toBe(instance.ttft.samples.length);
    const sum = instance.ttft.samples.reduce((a, s) => a + s.totalMs, 0) / 1000;
    expect(sample(text, 'exobar_ttft_seconds_sum', labels)).toBeCloseTo(sum, 6);
    expect(sample(text, 'exobar_ttft_prefill_seconds_count', labels)).toBe(instance.ttft.samples.length);
    // Every request with two tokens or more has its ITL p95 (the node's per-request figure).
    expect(sample(text, 'exobar_request_itl_p95_seconds_count', labels)).toBe(4);
    expect(sample(text, 'exobar_generated_tokens_total', labels)).toBeGreaterThanOrEqual(12);
    // And every gap between two tokens is one ITL sample: a request of n tokens gives n - 1.
    expect(sample(text, 'exobar_itl_seconds_count', labels)).toBe(sample(text, 'exobar_generated_tokens_total', labels)! - 4);
    expect(sample(text, 'exobar_itl_seconds_sum', labels)).toBeGreaterThan(0);
    expect(sample(text, 'exobar_instance_state', { ...labels, state: 'serving' })).toBe(1);
    expect(sample(text, 'exobar_instance_state', { ...labels, state: 'failed' })).toBe(0);
    expect(sample(text, 'exobar_fast_synch', labels)).toBe(Number(instance.fastSynch.enabled));
    expect(sample(text, 'exobar_queue_depth', labels)).toBe(0);
    expect(sample(text, 'exobar_exo_attached', {})).toBe(0);
    // The cancel reached the runner after its first token: sent, then confirmed.
    expect(sample(text, 'exobar_cancellations_total', { ...labels, state: 'confirmed' })).toBe(1);
    // The refused scrapes above count as refused inputs at the HTTP boundary.
    expect(sample(text, 'exobar_rejected_inputs_total', { boundary: 'http' })).toBe(rig.node.snapshot().rejectedInputs.http);
  });

  it("shows the runner's prompt cache as the snapshot does: bytes, cap, hits, misses, hit tokens", async () => {
    const messages = [{ role: 'user' as const, content: 'w1 w2 w3 w4 w5 w6 w7 w8 metrics-cache' }];
    await rig.client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages, max_tokens: 2 });
    const again = await rig.client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages, max_tokens: 2 });
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBe(again.usage!.prompt_tokens - 1);
    const text = await (await fetch(`${rig.url}/metrics`, { headers: { Authorization: `Bearer ${rig.token}` } })).text();
    const instance = localInstances(rig.node.snapshot())[0]!;
    const cache = instance.runnerEngine!.promptCache!;
    expect(instance.runnerEngine!.schedule).toBe('interleaved');
    expect(cache.hits).toBeGreaterThanOrEqual(1);
    const labels = { model: 'sim/llama-3.2-1b', instance: instance.id, source: 'local' };
    expect(sample(text, 'exobar_prompt_cache_bytes', labels)).toBe(cache.bytes);
    expect(sample(text, 'exobar_prompt_cache_cap_bytes', labels)).toBe(cache.capBytes);
    expect(cache.capBytes).toBeGreaterThan(0);
    expect(sample(text, 'exobar_prompt_cache_hits_total', labels)).toBe(cache.hits);
    expect(sample(text, 'exobar_prompt_cache_misses_total', labels)).toBe(cache.misses);
    expect(sample(text, 'exobar_prompt_cache_hit_tokens_total', labels)).toBe(cache.hitTokens);
  });
});
