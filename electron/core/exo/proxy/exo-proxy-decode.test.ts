/**
 * Decode figures of exo traffic through exobar's proxy: the official `openai` client
 * streams from the serving fake exo; the proxied record, the API's record copy and the
 * exo instance's request entry carry decode tokens/s and inter-token latency measured
 * from the tokens exobar relayed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { LLAMA_1B } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';

let p: ProxyRig;
beforeAll(async () => {
  p = await startProxyRig({ timeScale: 0.5 });
});
afterAll(async () => {
  await p?.close();
});

describe('decode figures of proxied exo requests', () => {
  it('measures tokens/s and ITL p50/p95 from the relayed stream, live and once done', async () => {
    const stream = await p.openai.chat.completions.create({
      model: LLAMA_1B,
      messages: [{ role: 'user', content: makePrompt(200, 'decode')[0]!.content }],
      max_tokens: 40,
      stream: true,
    });
    let id = '';
    let live: { decodeTokensPerSecond: number | null; itlP95Ms: number | null } | null = null;
    let n = 0;
    for await (const chunk of stream) {
      id = chunk.id;
      n += 1;
      if (n === 20) {
        const instanceId = [...p.client.reading.instances!.values()].find((i) => i.modelId === LLAMA_1B)!.instanceId;
        live = p.serving.traffic.instanceView(instanceId).requests.find((r) => r.id === id) ?? null;
      }
    }
    expect(n).toBe(40);
    expect(live?.decodeTokensPerSecond).toBeGreaterThan(0);
    const record = p.serving.traffic.records().find((r) => r.id === id)!;
    expect(record.phase).toBe('done');
    expect(record.decodeTokensPerSecond).toBeGreaterThan(0);
    expect(record.itlP50Ms).toBeGreaterThan(0);
    expect(record.itlP95Ms).toBeGreaterThanOrEqual(record.itlP50Ms!);
    // The rate is what the relayed stream showed: 39 gaps from the first token to the last.
    const span = record.lastTokenAt! - record.firstTokenAt!;
    expect(record.decodeTokensPerSecond!).toBeCloseTo((39 / span) * 1000, 6);
  });
});
