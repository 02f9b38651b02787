/**
 * The OpenAI-compatible API with the official `openai` client against the real node
 * and sim runner processes: whole and streamed completions, exo's prefill_progress
 * comments, stop sequences and seed, the completion id from the first moment (the first
 * chunk and x-request-id), cancellation by abort and by /v1/cancel/{id}, and the error
 * answers. The refused inputs are in openai-refusals.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ApiErrorBody } from '../../../shared/api';
import { makePrompt } from '../../../shared/token-count';
import { readRawSse, startCoreRig, type CoreRig } from '../../../test/support/api-harness';
import { localInstances } from '../../../shared/instance-state';
import { eventually } from '../../../test/support/eventually';

const SMALL = 'sim/llama-3.2-1b';

let rig: CoreRig;

beforeAll(async () => {
  rig = await startCoreRig({ simTimeScale: 0.2 });
  await rig.launch(SMALL);
});

afterAll(async () => {
  await rig?.close();
});

function instanceCounters() {
  const instance = localInstances(rig.node.snapshot()).find((i) => i.model === SMALL);
  if (!instance) throw new Error('no 1B instance');
  return instance.counters;
}

function timelineOf(id: string) {
  return rig.node.requestTimelines().find((t) => t.requestId === id) ?? null;
}

describe('chat completions with the official client', () => {
  it('answers a whole completion with usage', async () => {
    const completion = await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'say hello' }], max_tokens: 6 });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe(SMALL);
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.choices[0]!.message.role).toBe('assistant');
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(completion.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 });
    // The node measured this request's TTFT from its arrival at the API.
    expect(timelineOf(completion.id)?.outcome).toBe('finished');
  });

  it('says in usage how much of the prompt the runner\'s prompt cache served, whole and streamed', async () => {
    const messages = [{ role: 'user' as const, content: makePrompt(300, 'cached-usage')[0]!.content }];
    const first = await rig.client.chat.completions.create({ model: SMALL, messages, max_tokens: 2 });
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    // The same prompt again: all of it but the last token, whose logits start the answer.
    const again = await rig.client.chat.completions.create({ model: SMALL, messages, max_tokens: 2 });
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBe(again.usage!.prompt_tokens - 1);
    const stream = await rig.client.chat.completions.create({ model: SMALL, messages, max_tokens: 2, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe(usage!.prompt_tokens - 1);
    expect(timelineOf(again.id)?.cachedTokens).toBe(again.usage!.prompt_tokens - 1);
  });

  it('streams chunks, a finish chunk, a usage chunk, then ends', async () => {
    const stream = await rig.client.chat.completions.create({
      model: SMALL,
      messages: [{ role: 'user', content: 'count to five' }],
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    // First the role with empty content, as OpenAI's stream opens; then the tokens.
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const content = chunks.filter((c) => c.choices[0]?.delta.content);
    expect(content).toHaveLength(5);
    expect(content.every((c) => c.choices[0]!.delta.role === undefined)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]!.finish_reason).toBe('length');
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 5, total_tokens: last.usage!.prompt_tokens + 5 });
  });

  it('sends prefill_progress comments during prefill, generation_stats and [DONE] at the end', async () => {
    const response = await fetch(`${rig.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: SMALL, messages: makePrompt(9000, 'prefill-test'), max_tokens: 2, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const lines = await readRawSse(response);
    const progress = lines.filter((l) => l.startsWith(': prefill_progress ')).map((l) => JSON.parse(l.slice(': prefill_progress '.length)));
    // First 0 when the prefill begins (as exo's own first line), then chunks of at most 4096
    // tokens (exo's size, the interleaved schedule's bound): 9000 tokens take three or more.
    expect(progress[0]).toEqual({ processed_tokens: 0, total_tokens: 9000 });
    expect(progress.length).toBeGreaterThanOrEqual(4);
    expect(progress.at(-1)).toEqual({ processed_tokens: 9000, total_tokens: 9000 });
    for (const [i, p] of progress.entries()) {
      expect(p.total_tokens).toBe(9000);
      if (i === 0) continue;
      expect(p.processed_tokens - progress[i - 1].processed_tokens).toBeGreaterThan(0);
      expect(p.processed_tokens - progress[i - 1].processed_tokens).toBeLessThanOrEqual(4096);
    }
    // The role chunk opens the stream before the prefill; the first token comes after it.
    const firstData = lines.findIndex((l) => l.startsWith('data: '));
    expect(JSON.parse(lines[firstData]!.slice('data: '.length)).choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(firstData).toBeLessThan(lines.findIndex((l) => l.startsWith(': prefill_progress ')));
    const firstContent = lines.findIndex((l) => l.startsWith('data: {') && JSON.parse(l.slice('data: '.length)).choices[0]?.delta.content);
    expect(lines.findLastIndex((l) => l.startsWith(': prefill_progress '))).toBeLessThan(firstContent);
    const stats = lines.find((l) => l.startsWith(': generation_stats '));
    expect(JSON.parse(stats!.slice(': generation_stats '.length))).toMatchObject({ prompt_tokens: 9000, generation_tokens: 2 });
    expect(lines.at(-1)).toBe('data: [DONE]');
    expect(lines.indexOf(stats!)).toBeLessThan(lines.length - 1);
  });

  it('lists the running models first, then the ones a request would load', async () => {
    const models = await rig.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([SMALL, 'sim/llama-3.2-3b']);
    expect(models.data[0]).toMatchObject({ object: 'model', owned_by: 'exobar', ready: true, state: 'loaded' });
    expect(models.data[1]).toMatchObject({ ready: false, state: 'available', instance_ids: [] });
    const one = await rig.client.models.retrieve(SMALL);
    expect(one.id).toBe(SMALL);
    // Model ids hold a slash; a plain path works too.
    expect((await fetch(`${rig.url}/v1/models/${SMALL}`)).status).toBe(200);
  });
});

describe('stop sequences and seed', () => {
  /** The answer for seed 5 without stop, and a stop string from its middle that spans two tokens. */
  async function answerAndStop() {
    const free = await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'tell me' }], max_tokens: 30, seed: 5 });
    const full = free.choices[0]!.message.content!;
    // From the last letter of the 6th word, over the space, into the 7th.
    const at = full.split(' ').slice(0, 6).join(' ').length - 1;
    const stop = full.slice(at, at + 3);
    return { full, stop, expected: full.slice(0, full.indexOf(stop)) };
  }

  it('a whole completion ends before the stop string, with finish_reason "stop"', async () => {
    const { full, stop, expected } = await answerAndStop();
    expect(expected.length).toBeLessThan(full.length);
    for (const stopParam of [stop, ['never there', stop]]) {
      const completion = await rig.client.chat.completions.create({
        model: SMALL,
        messages: [{ role: 'user', content: 'tell me' }],
        max_tokens: 30,
        seed: 5,
        stop: stopParam,
      });
      expect(completion.choices[0]!.message.content).toBe(expected);
      expect(completion.choices[0]!.finish_reason).toBe('stop');
      expect(completion.usage!.completion_tokens).toBeLessThan(30);
    }
  });

  it('a stream ends before the stop string, never sending any of it, with finish_reason "stop"', async () => {
    const { stop, expected } = await answerAndStop();
    const stream = await rig.client.chat.completions.create({
      model: SMALL,
      messages: [{ role: 'user', content: 'tell me' }],
      max_tokens: 30,
      seed: 5,
      stop: [stop],
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(expected);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('the same seed gives the same answer, another seed another one', async () => {
    const ask = (seed: number) =>
      rig.client.chat.completions
        .create({ model: SMALL, messages: [{ role: 'user', content: 'pick words' }], max_tokens: 10, seed })
        .then((c) => c.choices[0]!.message.content);
    const first = await ask(42);
    expect(await ask(42)).toBe(first);
    expect(await ask(43)).not.toBe(first);
  });
});

describe('the completion id from the first moment', () => {
  it('x-request-id carries the completion id, streaming or not', async () => {
    const whole = await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }).withResponse();
    expect(whole.data.id).toMatch(/^chatcmpl-/);
    expect(whole.response.headers.get('x-request-id')).toBe(whole.data.id);
    const streamed = await rig.client.chat.completions
      .create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, stream: true })
      .withResponse();
    const ids = new Set<string>();
    for await (const chunk of streamed.data) ids.add(chunk.id);
    expect([...ids]).toEqual([streamed.response.headers.get('x-request-id')]);
  });

  it('every other /v1 answer carries a fresh x-request-id, errors included', async () => {
    const models = await fetch(`${rig.url}/v1/models`);
    const bad = await fetch(`${rig.url}/v1/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"model":' });
    const unknown = await rig.client.chat.completions
      .create({ model: 'nope/model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e as APIError);
    const ids = [models.headers.get('x-request-id'), bad.headers.get('x-request-id'), (unknown as APIError).headers?.get('x-request-id')];
    expect(bad.status).toBe(400);
    for (const id of ids) expect(id).toMatch(/^req-[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(3);
  });

  it('the first chunk carries the id and the role at once, so a long prefill can be cancelled with it', async () => {
    // 100k tokens: about 25 prefill chunks of 4096, well over a second at this time scale.
    const { data: stream, response } = await rig.client.chat.completions
      .create({
        model: SMALL,
        messages: makePrompt(100_000, 'cancel-in-prefill') as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
        max_tokens: 5,
        stream: true,
      })
      .withResponse();
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    let phaseAtCancel = '';
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunks.length > 1) continue;
      expect(chunk.id).toBe(response.headers.get('x-request-id'));
      expect(chunk.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      // The prompt is still being prefilled: wait until the runner is in it, then cancel with the chunk's id alone.
      const request = await eventually(
        () => rig.node.snapshot().instances[0]!.queue.requests.find((r) => r.id === chunk.id && r.phase === 'prefilling'),
        10_000,
        'the prefill',
      );
      phaseAtCancel = request.phase;
      const answer = await fetch(`${rig.url}/v1/cancel/${chunk.id}`, { method: 'POST' });
      expect(answer.status).toBe(200);
    }
    expect(phaseAtCancel).toBe('prefilling');
    expect(chunks.filter((c) => c.choices[0]?.delta.content)).toEqual([]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('cancelled');
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(0);
    const timeline = timelineOf(chunks[0]!.id)!;
    expect(timeline.outcome).toBe('cancelled');
    expect(timeline.firstTokenAt).toBeNull();
  });
});

describe('cancellation', () => {
  it('cancels a stream when the client aborts', async () => {
    const before = instanceCounters().cancelled;
    const controller = new AbortController();
    const stream = await rig.client.chat.completions.create(
      { model: SMALL, messages: [{ role: 'user', content: 'a long story' }], max_tokens: 50_000, stream: true },
      { signal: controller.signal },
    );
    let id = '';
    let received = 0;
    for await (const chunk of stream) {
      id = chunk.id;
      received += 1;
      if (received === 3) controller.abort();
    }
    expect(id).toMatch(/^chatcmpl-/);
    const timeline = await eventually(() => (timelineOf(id)?.outcome === 'cancelled' ? timelineOf(id) : null), 10_000, 'the aborted request to be cancelled');
    expect(timeline!.completionTokens).toBeLessThan(50_000);
    expect(instanceCounters().cancelled).toBe(before + 1);
  });

  it('cancels a whole completion when the client aborts', async () => {
    const before = instanceCounters().cancelled;
    const controller = new AbortController();
    const pending = rig.client.chat.completions.create(
      { model: SMALL, messages: [{ role: 'user', content: 'a long story' }], max_tokens: 50_000 },
      { signal: controller.signal },
    );
    await eventually(() => localInstances(rig.node.snapshot())[0]!.queue.requests.some((r) => r.phase === 'decoding'), 10_000, 'decoding');
    controller.abort();
    await expect(pending).rejects.toThrow(OpenAI.APIUserAbortError);
    await eventually(() => instanceCounters().cancelled === before + 1, 10_000, 'the cancel to be confirmed');
  });

  it('cancels a stream by POST /v1/cancel/{id}: a final chunk with finish_reason "cancelled", then [DONE]', async () => {
    const stream = await rig.client.chat.completions.create({
      model: SMALL,
      messages: [{ role: 'user', content: 'a long story' }],
      max_tokens: 50_000,
      stream: true,
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunks.length === 2) {
        const answer = await fetch(`${rig.url}/v1/cancel/${chunk.id}`, { method: 'POST' });
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual({ id: chunk.id, object: 'chat.completion.cancellation', cancelled: true });
      }
    }
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]!.finish_reason).toBe('cancelled');
    expect(chunks.at(-1)!.usage!.completion_tokens).toBeLessThan(50_000);
    // Cancelling again: it is no longer in flight.
    const again = await fetch(`${rig.url}/v1/cancel/${chunks[0]!.id}`, { method: 'POST' });
    expect(again.status).toBe(404);
    expect(((await again.json()) as ApiErrorBody).error.code).toBe('request_not_found');
  });

  it('answers a whole completion cancelled by /v1/cancel/{id} with 200 and finish_reason "cancelled"', async () => {
    const pending = rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'a long story' }], max_tokens: 50_000 });
    const request = await eventually(() => localInstances(rig.node.snapshot())[0]!.queue.requests.find((r) => r.phase === 'decoding'), 10_000, 'decoding');
    expect((await fetch(`${rig.url}/v1/cancel/${request.id}`, { method: 'POST' })).status).toBe(200);
    const completion = await pending;
    expect(completion.id).toBe(request.id);
    expect(completion.choices[0]!.finish_reason).toBe('cancelled');
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBeLessThan(50_000);
  });
});

describe('error answers', () => {
  // A known model that is not running loads on request (on-demand-api.test.ts); with that off, it is a 404 there too.
  it('404 for an unknown model, saying where the list is', async () => {
    const unknown = await rig.client.chat.completions.create({ model: 'nope/model', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as APIError).code).toBe('model_not_found');
    expect((unknown as APIError).message).toMatch(/unknown model 'nope\/model'/);
  });

  it('400 for a request that fails validation, naming the field', async () => {
    const bad = await rig.client.chat.completions.create({ model: SMALL, messages: [] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as APIError).message).toMatch(/messages/);
    const n2 = await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], n: 2 }).catch((e: unknown) => e);
    expect(n2).toBeInstanceOf(OpenAI.BadRequestError);
    expect((n2 as APIError).message).toMatch(/n must be 1/);
    const temp = await rig.client.chat.completions
      .create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], temperature: 7 })
      .catch((e: unknown) => e);
    expect((temp as APIError).status).toBe(400);
    expect((temp as APIError).param).toBe('temperature');
  });

  it('a runner crash mid-stream ends the stream with an error the client raises', async () => {
    const stream = await rig.client.chat.completions.create({
      model: SMALL,
      messages: [{ role: 'user', content: 'EXOBAR RUNNER MUST CRASH' }],
      max_tokens: 200,
      stream: true,
    });
    const failure = await (async () => {
      for await (const _chunk of stream) {
        // read until the error
      }
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as APIError).code).toBe('runner_crashed');
    // The runner comes back and the model answers again.
    await eventually(
      async () => {
        const ok = await rig.client.chat.completions.create({ model: SMALL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }).catch(() => null);
        return ok?.choices[0]?.finish_reason === 'length';
      },
      30_000,
      'the restarted runner to answer',
    );
  });
});
