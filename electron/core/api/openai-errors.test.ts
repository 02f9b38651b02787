/**
 * Error answers that need a scripted node: a full queue, a runner that refuses at
 * once, a bug in the node. The OpenAI client must raise its typed errors, and the
 * server must keep serving afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ApiErrorBody } from '../../../shared/api';
import { FAKE_PROMPTS, FakeNode } from '../../../test/support/fake-node';
import { startServerRig, type ApiRig } from '../../../test/support/api-harness';

const MODEL = 'sim/llama-3.2-1b';
let node: FakeNode;
let rig: ApiRig;

beforeAll(async () => {
  node = new FakeNode({ queueCapacity: 1, tokenMs: 20 });
  rig = await startServerRig(node);
  await node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
});

afterAll(async () => {
  await rig?.close();
});

const ask = (content: string, stream = false) =>
  rig.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content }], max_tokens: 3, stream } as never);

describe('error answers in OpenAI shape', () => {
  it('429 when the model queue is full, streaming or not', async () => {
    // 50 tokens at 20 ms: the one slot stays taken for a second.
    const first = rig.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 50 });
    for (const stream of [false, true]) {
      const refused = await ask('second', stream).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect((refused as APIError).code).toBe('queue_full');
      expect((refused as APIError).type).toBe('rate_limit_error');
    }
    await first;
  });

  it('503 when the runner refuses the request, before any stream starts', async () => {
    for (const stream of [false, true]) {
      const refused = await ask(FAKE_PROMPTS.failAtOnce, stream).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
      expect((refused as APIError).status).toBe(503);
      expect((refused as APIError).code).toBe('runner_failed');
    }
  });

  it('a whole completion whose runner fails midway answers 503', async () => {
    const refused = await ask(FAKE_PROMPTS.failMidStream).catch((e: unknown) => e);
    expect((refused as APIError).status).toBe(503);
    expect((refused as APIError).code).toBe('runner_crashed');
  });

  it('an error for a request the node took carries its completion id in x-request-id', async () => {
    for (const prompt of [FAKE_PROMPTS.failAtOnce, FAKE_PROMPTS.failMidStream]) {
      const before = node.submitted.length;
      const refused = (await ask(prompt).catch((e: unknown) => e)) as APIError;
      expect(refused.status).toBe(503);
      expect(node.submitted.length).toBe(before + 1);
      // The fake names its requests chatcmpl-fakeN; the server's own fallback ids are req-...
      expect(refused.headers?.get('x-request-id')).toMatch(/^chatcmpl-fake\d+$/);
    }
  });

  it('500 with a generic message for a bug, without its details', async () => {
    const response = await fetch(`${rig.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: FAKE_PROMPTS.throwUnexpected }] }),
    });
    expect(response.status).toBe(500);
    const body = await response.json();
    expect(body).toEqual({ error: { message: expect.stringMatching(/unexpected error/), type: 'server_error', code: 'internal_error', param: null } });
    expect(JSON.stringify(body)).not.toMatch(/a bug in the node/);
  });

  it('404 for an unknown path and 405 for a wrong method, and keeps serving', async () => {
    const missing = await fetch(`${rig.url}/v1/nothing`);
    expect(missing.status).toBe(404);
    const notFound = ((await missing.json()) as ApiErrorBody).error;
    expect(notFound.type).toBe('not_found_error');
    // It names the endpoints that do exist there.
    expect(notFound.message).toMatch(/^no endpoint GET \/v1\/nothing; the endpoints there are .*GET \/v1\/models.*POST \/v1\/chat\/completions/);
    const wrong = await fetch(`${rig.url}/v1/chat/completions`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    const ok = await ask('still there?');
    expect((ok as OpenAI.Chat.Completions.ChatCompletion).choices[0]!.finish_reason).toBe('length');
  });

  it('passes the arrival time to the node, so TTFT starts at the API', async () => {
    const before = performance.now();
    await ask('timing');
    const submitted = node.submitted.at(-1)!;
    expect(submitted.arrivedAt).toBeGreaterThanOrEqual(before);
    expect(submitted.arrivedAt).toBeLessThanOrEqual(performance.now());
  });
});
