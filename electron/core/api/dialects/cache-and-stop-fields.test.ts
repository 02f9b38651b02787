/**
 * What each dialect says of the runner's prompt cache and of a matched stop sequence,
 * against the real node and sim runners: Anthropic's `cache_read_input_tokens` (the
 * runner's cache hit, with `input_tokens` the rest and `cache_creation_input_tokens` 0)
 * and `stop_reason: "stop_sequence"` with the `stop_sequence` that matched, whole and
 * streamed; the Responses' `input_tokens_details.cached_tokens`; Ollama's
 * `prompt_eval_cached_count` beside the whole prompt's `prompt_eval_count`.
 */
import { describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { readRawSse, useCoreRig } from '../../../../test/support/api-harness';

const SMALL = 'sim/llama-3.2-1b';
const rig = useCoreRig([SMALL], { simTimeScale: 0.05 });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read as their clients read them
async function post(path: string, body: unknown): Promise<any> {
  const response = await fetch(`${rig().url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return response.json();
}

/** A prompt of 300 tokens no other test sends, so the first request finds nothing cached. */
const promptFor = (salt: string): string => makePrompt(300, salt)[0]!.content;

/** The JSON payloads of a raw SSE stream's `data:` lines. */
async function sseData(path: string, body: unknown): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${rig().url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return (await readRawSse(response)).filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice('data: '.length)) as Record<string, unknown>);
}

describe('Anthropic Messages', () => {
  it('splits the prompt into the cache hit and the rest, whole and streamed', async () => {
    const body = { model: SMALL, max_tokens: 2, messages: [{ role: 'user', content: promptFor('anthropic-cache') }] };
    const first = await post('/v1/messages', body);
    expect(first.usage).toMatchObject({ input_tokens: 300, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    // The same prompt again: all of it but the last token, whose logits start the answer.
    const again = await post('/v1/messages', body);
    expect(again.usage).toMatchObject({ input_tokens: 1, cache_read_input_tokens: 299, cache_creation_input_tokens: 0, output_tokens: 2 });
    const events = await sseData('/v1/messages', { ...body, stream: true });
    const delta = events.find((e) => e.type === 'message_delta') as { usage: Record<string, number> };
    expect(delta.usage).toMatchObject({ input_tokens: 1, cache_read_input_tokens: 299, cache_creation_input_tokens: 0, output_tokens: 2 });
  });

  it('names the stop sequence that ended the answer, whole and streamed', async () => {
    // The sim writes words separated by spaces: the space is met, the other never.
    const body = { model: SMALL, max_tokens: 30, stop_sequences: ['never in a sim answer', ' '], messages: [{ role: 'user', content: 'tell me' }] };
    const whole = await post('/v1/messages', body);
    expect(whole).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: ' ' });
    expect(whole.content[0].text).not.toContain(' ');
    const events = await sseData('/v1/messages', { ...body, stream: true });
    expect(events.find((e) => e.type === 'message_delta')).toMatchObject({ delta: { stop_reason: 'stop_sequence', stop_sequence: ' ' } });
    // Without a stop sequence met, none is named.
    const ended = await post('/v1/messages', { ...body, stop_sequences: ['never in a sim answer'], max_tokens: 3 });
    expect(ended).toMatchObject({ stop_reason: 'max_tokens', stop_sequence: null });
  });
});

describe('OpenAI Responses', () => {
  it('says in input_tokens_details how much of the prompt the cache served', async () => {
    const body = { model: SMALL, max_output_tokens: 2, input: promptFor('responses-cache') };
    await post('/v1/responses', body);
    const again = await post('/v1/responses', body);
    expect(again.usage).toMatchObject({ input_tokens: 300, input_tokens_details: { cached_tokens: 299 } });
  });
});

describe('Ollama chat', () => {
  it('counts the whole prompt in prompt_eval_count and the cache hit in prompt_eval_cached_count', async () => {
    const body = { model: SMALL, stream: false, options: { num_predict: 2 }, messages: [{ role: 'user', content: promptFor('ollama-cache') }] };
    const first = await post('/api/chat', body);
    expect(first).toMatchObject({ prompt_eval_count: 300, prompt_eval_cached_count: 0 });
    const again = await post('/api/chat', body);
    expect(again).toMatchObject({ prompt_eval_count: 300, prompt_eval_cached_count: 299 });
  });
});
