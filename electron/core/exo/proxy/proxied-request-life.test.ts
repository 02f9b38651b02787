/**
 * The proxy's request state machine driven by real requests through exobar to the fake
 * exo: a stream, a whole answer, a cancel by POST /v1/cancel after the first token and
 * a client abort each end as they should, and no change of any request was refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { eventually } from '../../../../test/support/eventually';

let p: ProxyRig;
beforeAll(async () => void (p = await startProxyRig({ timeScale: 0.05 })));
afterAll(() => p?.close());

/** A user message of `tokens` prompt tokens, as the openai client types it. */
const prompt = (tokens: number, salt: string) => makePrompt(tokens, salt).map((m) => ({ role: 'user' as const, content: m.content }));

describe('proxied requests driven through exobar', () => {
  it('stream, whole answer, cancel after the first token, client abort: each ends as it should, no transition refused', async () => {
    const stream = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: prompt(2000, 'life-a'), max_tokens: 3, stream: true });
    let streamId = '';
    for await (const chunk of stream) streamId = chunk.id;
    expect(p.serving.traffic.find(streamId)).toMatchObject({ phase: 'done' });

    const whole = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: prompt(100, 'life-b'), max_tokens: 2 });
    expect(p.serving.traffic.find(whole.id)).toMatchObject({ phase: 'done' });

    const cancelled = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: prompt(100, 'life-c'), max_tokens: 2000, stream: true });
    const reasons: Array<string | null> = [];
    let cancelledId = '';
    let answer: Promise<Response> | null = null;
    for await (const chunk of cancelled) {
      cancelledId = chunk.id;
      reasons.push(chunk.choices[0]?.finish_reason ?? null);
      answer ??= fetch(`${p.rig.url}/v1/cancel/${chunk.id}`, { method: 'POST' });
    }
    expect((await answer!).status).toBe(200);
    expect(reasons.at(-1)).toBe('cancelled');
    expect(p.serving.traffic.find(cancelledId)).toMatchObject({ phase: 'cancelled', reason: 'cancelled by POST /v1/cancel' });

    // The client goes away once exo's stream has begun: exobar cancels at exo for it.
    const controller = new AbortController();
    const response = await fetch(`${p.rig.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_3B, messages: prompt(60_000, 'life-d'), max_tokens: 3, stream: true }),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    controller.abort();
    await eventually(() => p.serving.traffic.active().length === 0 && p.exo.worker.openCommands().length === 0, 5000, 'exobar to cancel it at exo');
    expect(p.serving.traffic.records().at(-1)).toMatchObject({ phase: 'cancelled', reason: 'the client went away' });

    expect(p.serving.traffic.refusals).toEqual([]);
    expect(p.serving.traffic.refusedTransitions).toBe(0);
  });
});
