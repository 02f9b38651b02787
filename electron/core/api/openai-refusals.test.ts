/**
 * Nothing a client sends is silently ignored: every OpenAI parameter exobar cannot honour
 * is refused with a 400 that names it, a prompt over the model's context window gets
 * OpenAI's context_length_exceeded, a body in another charset or media type gets 415 (or
 * 400 when its bytes are not UTF-8), and every refusal is counted. Against the real node
 * with sim runners, with the official client wherever it can send the input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ApiErrorBody } from '../../../shared/api';
import type { CatalogModel } from '../../../shared/catalog';
import { makePrompt } from '../../../shared/token-count';
import { useCoreRig } from '../../../test/support/api-harness';
import { CHAT_COMPLETION_PARAMETERS } from './openai-parameters';

const SMALL = 'sim/llama-3.2-1b';
const CONTEXT_LENGTH = 131_072;
const hi = [{ role: 'user' as const, content: 'hi' }];

/** A local MLX model as the model scan lists it (scan-local-models.ts); its runtime need not exist. */
const MLX_MODEL: CatalogModel = {
  id: 'mlx/mlx-community/Llama-3.2-1B-Instruct-4bit',
  name: 'Llama-3.2-1B-Instruct-4bit',
  engine: 'mlx',
  simulated: false,
  memoryBytes: 1e9,
  sizeClass: 'small',
  path: '/nonexistent',
};

/** Models the core may launch beyond the sim catalog, read at each launch: a test adds an MLX model for its own run. */
let extraModels: CatalogModel[] = [];
const rig = useCoreRig([SMALL], { simTimeScale: 0.2, extraModels: () => extraModels });

const rejectedHttp = () => rig().node.snapshot().rejectedInputs.http ?? 0;

/** Runs `send`, expects it to fail with an OpenAI APIError, and that exactly one refusal was counted. */
async function refusedCounted(send: () => Promise<unknown>): Promise<APIError> {
  const before = rejectedHttp();
  const error = await send().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  expect(rejectedHttp()).toBe(before + 1);
  return error as APIError;
}

/** A raw POST to /v1/chat/completions, for what the client cannot send. */
async function rawPost(body: string | Uint8Array, contentType: string | null = 'application/json') {
  const before = rejectedHttp();
  const response = await fetch(`${rig().url}/v1/chat/completions`, {
    method: 'POST',
    headers: contentType === null ? {} : { 'Content-Type': contentType },
    // Bytes, so that fetch adds no Content-Type of its own (it sends text/plain for a string).
    body: typeof body === 'string' ? Buffer.from(body) : body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as ApiErrorBody) : null, counted: rejectedHttp() - before, headers: response.headers };
}

describe('OpenAI parameters exobar cannot honour are refused by name', () => {
  const cases: { name: string; value: unknown; why: RegExp }[] = [
    { name: 'functions', value: [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }], why: /send the same functions as `tools`/ },
    { name: 'function_call', value: 'auto', why: /send the same functions as `tools`/ },
    { name: 'n', value: 2, why: /one choice per request/ },
    { name: 'logprobs', value: true, why: /log probabilities/ },
    { name: 'top_logprobs', value: 3, why: /log probabilities/ },
    { name: 'logit_bias', value: { '50256': -100 }, why: /logit bias/ },
    { name: 'audio', value: { voice: 'alloy', format: 'wav' }, why: /text only/ },
    { name: 'modalities', value: ['text', 'audio'], why: /"text" modality/ },
    { name: 'prediction', value: { type: 'content', content: 'hello' }, why: /predicted outputs/ },
    { name: 'reasoning_effort', value: 'low', why: /reasoning-effort/ },
    { name: 'store', value: true, why: /does not store completions/ },
    { name: 'verbosity', value: 'low', why: /verbosity/ },
    { name: 'web_search_options', value: {}, why: /search the web/ },
  ];

  it.each(cases)('400 for $name = $value, naming it and saying why, streaming or not', async ({ name, value, why }) => {
    for (const stream of [false, true]) {
      const error = await refusedCounted(() => rig().client.chat.completions.create({ model: SMALL, messages: hi, stream, [name]: value } as never));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.code).toBe('unsupported_parameter');
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(name);
      expect(error.message).toContain(`Unsupported parameter: '${name}'`);
      expect(error.message).toMatch(why);
    }
  });

  it('accepts the values that ask for nothing, and the parameters that cannot change the answer', async () => {
    const completion = await rig().client.chat.completions.create({
      model: SMALL,
      messages: hi,
      max_tokens: 3,
      tools: [],
      tool_choice: 'none',
      parallel_tool_calls: false,
      response_format: { type: 'text' },
      n: 1,
      logprobs: false,
      logit_bias: {},
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      top_p: 0.9,
      store: false,
      modalities: ['text'],
      user: 'someone',
      metadata: { team: 'a' },
      service_tier: 'auto',
      safety_identifier: 'hash',
      prompt_cache_key: 'k',
    });
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage!.completion_tokens).toBe(3);
  });

  it('400 for a parameter OpenAI does not have either, as OpenAI answers it', async () => {
    const answer = await rawPost(JSON.stringify({ model: SMALL, messages: hi, top_q: 40 }));
    expect(answer.status).toBe(400);
    expect(answer.body!.error).toMatchObject({ code: 'unknown_parameter', param: 'top_q', type: 'invalid_request_error' });
    expect(answer.body!.error.message).toMatch(/^Unrecognized request argument supplied: top_q/);
    expect(answer.counted).toBe(1);
  });

  it('400 in words for an image content part: images are not supported by this model, not zod\'s bare "Invalid input"', async () => {
    const image = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }];
    const answer = await rawPost(JSON.stringify({ model: SMALL, messages: image }));
    expect(answer.status).toBe(400);
    expect(answer.body!.error.message).toContain('images and audio are not supported by this model');
    expect(answer.body!.error.message).toContain('messages[0].content');
    expect(answer.body!.error.message).not.toMatch(/Invalid input/);
  });

  it('400 for malformed stop sequences: more than 4, or an empty one', async () => {
    for (const stop of [['a', 'b', 'c', 'd', 'e'], '', ['ok', '']]) {
      const error = await refusedCounted(() => rig().client.chat.completions.create({ model: SMALL, messages: hi, stop }));
      expect(error.status).toBe(400);
      expect(error.param).toMatch(/^stop/);
    }
  });

  it('takes stop for an MLX model, whose runner applies it: the request gets as far as the model', async () => {
    const mlx = MLX_MODEL;
    extraModels = [mlx];
    try {
      const notRunning = await rig()
        .client.chat.completions.create({ model: mlx.id, messages: hi, stop: ['\n'] })
        .catch((e: unknown) => e);
      expect(notRunning).toBeInstanceOf(OpenAI.NotFoundError);
    } finally {
      extraModels = [];
    }
  });

  it('refuses a jaccl instance of an MLX model: the single-process runner never joins a JACCL group', async () => {
    const mlx: CatalogModel = { ...MLX_MODEL, id: 'mlx/mlx-community/jaccl-refusal-4bit' };
    extraModels = [mlx];
    try {
      const before = rig().node.snapshot().instances.length;
      const res = await rig().control('POST', '/api/instances', { model: mlx.id, instanceType: 'jaccl' });
      expect(res.status).toBe(400);
      const body = res.body as ApiErrorBody;
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message).toMatch(/never joins a JACCL group.*create it as a ring instance/);
      expect(rig().node.snapshot().instances).toHaveLength(before);
    } finally {
      extraModels = [];
    }
  });
});

describe('max_completion_tokens, the newer name of max_tokens', () => {
  it('limits the completion alone, or with max_tokens when both say the same', async () => {
    const alone = await rig().client.chat.completions.create({ model: SMALL, messages: hi, max_completion_tokens: 4 });
    expect(alone.choices[0]!.finish_reason).toBe('length');
    expect(alone.usage!.completion_tokens).toBe(4);
    const both = await rig().client.chat.completions.create({ model: SMALL, messages: hi, max_completion_tokens: 2, max_tokens: 2 });
    expect(both.usage!.completion_tokens).toBe(2);
  });

  it('400 when max_tokens and max_completion_tokens differ', async () => {
    const error = await refusedCounted(() => rig().client.chat.completions.create({ model: SMALL, messages: hi, max_completion_tokens: 4, max_tokens: 5 }));
    expect(error).toMatchObject({ status: 400, param: 'max_completion_tokens' });
    expect(error.message).toMatch(/same limit/);
  });
});

describe("the model's context window", () => {
  it('refuses a prompt longer than the context length with context_length_exceeded, streaming or not', async () => {
    const messages = <OpenAI.Chat.Completions.ChatCompletionMessageParam[]>makePrompt(CONTEXT_LENGTH + 1, 'too-long');
    for (const stream of [false, true]) {
      const error = await refusedCounted(() => rig().client.chat.completions.create({ model: SMALL, messages, stream }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ code: 'context_length_exceeded', type: 'invalid_request_error', param: 'messages' });
      expect(error.message).toBe(
        `400 This model's maximum context length is ${CONTEXT_LENGTH} tokens. However, your messages resulted in ${CONTEXT_LENGTH + 1} tokens. Please reduce the length of the messages.`,
      );
    }
    // Nothing reached the runner.
    expect(
      rig()
        .node.requestTimelines()
        .some((t) => t.promptTokens > CONTEXT_LENGTH),
    ).toBe(false);
  });

  it('refuses a prompt and a completion that together do not fit', async () => {
    const messages = <OpenAI.Chat.Completions.ChatCompletionMessageParam[]>makePrompt(100, 'fits-alone');
    const error = await refusedCounted(() => rig().client.chat.completions.create({ model: SMALL, messages, max_tokens: CONTEXT_LENGTH }));
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toContain(`However, you requested ${CONTEXT_LENGTH + 100} tokens (100 in the messages, ${CONTEXT_LENGTH} in the completion)`);
  });
});

describe('the body must be UTF-8 JSON', () => {
  const body = JSON.stringify({ model: SMALL, messages: hi, max_tokens: 1 });

  it('415 for a charset other than UTF-8, and for a media type that is not JSON', async () => {
    for (const type of [
      'application/json; charset=iso-8859-1',
      'application/json;charset="utf-16"',
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
    ]) {
      const answer = await rawPost(body, type);
      expect(answer.status, type).toBe(415);
      expect(answer.body!.error.code).toBe('unsupported_media_type');
      expect(answer.counted).toBe(1);
    }
    const latin1 = await rawPost(body, 'application/json; charset=latin1');
    expect(latin1.body!.error.message).toMatch(/must be UTF-8 JSON.*charset=latin1/);
  });

  it('400 for bytes that are not UTF-8', async () => {
    // "café" in Latin-1: the é is the lone byte 0xE9, invalid in UTF-8.
    const bytes = Buffer.concat([Buffer.from(`{"model":"${SMALL}","messages":[{"role":"user","content":"caf`), Buffer.from([0xe9]), Buffer.from('"}]}')]);
    const answer = await rawPost(bytes);
    expect(answer.status).toBe(400);
    expect(answer.body!.error).toMatchObject({ code: 'invalid_encoding', type: 'invalid_request_error' });
    expect(answer.counted).toBe(1);
  });

  it('serves UTF-8 JSON declared in any spelling, or with no Content-Type at all', async () => {
    for (const type of ['application/json; charset=UTF-8', 'application/json; charset=utf8', 'application/vnd.api+json', null]) {
      const answer = await rawPost(JSON.stringify({ model: SMALL, messages: [{ role: 'user', content: 'café ☕' }], max_tokens: 1 }), type);
      expect(answer.status, String(type)).toBe(200);
      expect(answer.counted).toBe(0);
    }
  });
});

describe('docs/api.md', () => {
  it('lists every chat-completions parameter with what exobar does with it', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/api.md'), 'utf8');
    for (const { name, support } of CHAT_COMPLETION_PARAMETERS) {
      expect(doc, name).toMatch(new RegExp(`^\\| \`${name}\` \\| ${support}`, 'm'));
    }
  });
});
