/**
 * GPU sharing on exo for traffic through exobar's proxy (the serving fake exo: the 1B
 * and the 3B on one Mac, "studio-a"): the 1B streams, the 3B prefills a long prompt
 * meanwhile; the 1B's exo instance files gaps beside the 3B's prefill, named by Mac,
 * and the attached view carries it as that instance's `sharing`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../shared/token-count';
import { LLAMA_1B, LLAMA_3B } from '../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../test/support/exo-proxy-rig';

let p: ProxyRig;
beforeAll(async () => {
  p = await startProxyRig({ timeScale: 0.2, mode: 'fixed' });
});
afterAll(async () => {
  await p?.close();
});

const user = (content: string) => [{ role: 'user' as const, content }];

/** Streams a request to its end (exobar sees exo's prefill progress only on a stream). */
async function drain(model: string, content: string, maxTokens: number): Promise<void> {
  const stream = await p.openai.chat.completions.create({ model, messages: user(content), max_tokens: maxTokens, stream: true });
  for await (const chunk of stream) void chunk;
}

describe('GPU sharing of proxied exo traffic', () => {
  it("files the 1B's gaps beside the 3B's prefill on studio-a", async () => {
    const b = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: user('a long story'), max_tokens: 400, stream: true });
    let n = 0;
    let a: Promise<unknown> | null = null;
    for await (const chunk of b) {
      void chunk;
      n += 1;
      if (n === 30) a = drain(LLAMA_3B, makePrompt(20_000, 'exo-sharing')[0]!.content, 2);
    }
    await a;
    const instances = [...p.client.reading.instances!.values()];
    const oneB = instances.find((i) => i.modelId === LLAMA_1B)!.instanceId;
    const threeB = instances.find((i) => i.modelId === LLAMA_3B)!.instanceId;
    const sharing = p.serving.sharing.snapshot(oneB);
    expect(sharing.observed).toBe('proxied');
    expect(sharing.solo.gaps).toBeGreaterThan(10);
    const beside = sharing.neighbours.find((x) => x.instanceId === threeB && x.phase === 'prefilling');
    expect(beside?.node).toBe('studio-a');
    expect(beside?.gaps).toBeGreaterThan(0);
  }, 60_000);
});
