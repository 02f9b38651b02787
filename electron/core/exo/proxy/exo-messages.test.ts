/**
 * Anthropic Messages for an exo model, through exobar (the real core) to the serving fake
 * exo, over real HTTP: exo's own event sequence passes through, the record takes exo's
 * command id from `msg_<command id>` and logs as `anthropic-messages`, `POST
 * /v1/cancel/msg_…` and a client gone cancel at exo, a second request waits in exobar's
 * hold while its model prefills, only exo's declared fields go on, and a model exo does
 * not serve falls through to exobar's own Messages route.
 */
import { describe, expect, it } from 'vitest';
import { readRawSse } from '../../../../test/support/api-harness';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { dataEvents, dialectTestRig, promptText } from '../../../../test/support/exo-dialect-tests';
import { exoRecord } from '../../request-log/request-feed';
import { ExoTraffic } from './exo-traffic';

const dialect = dialectTestRig({ timeScale: 0.05 });
const p = dialect.p;

const messages = (body: Record<string, unknown>, signal?: AbortSignal) => dialect.post('/v1/messages', body, signal);

describe('Anthropic Messages on exo, through exobar', () => {
  it("streams exo's own events, and records the request by exo's command id as anthropic-messages", async () => {
    const lines = await readRawSse(await messages({ model: LLAMA_3B, max_tokens: 3, stream: true, messages: [{ role: 'user', content: promptText(5000, 'm-a') }] }));
    expect(lines[0]).toBe(': keep-alive');
    // exo's Messages stream has no prefill progress.
    expect(lines.some((l) => l.startsWith(': prefill_progress'))).toBe(false);
    const seq = dataEvents(lines);
    expect(seq.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const id = (seq[0]!.message as { id: string }).id;
    expect(id).toMatch(/^msg_/);
    expect(seq[6]).toMatchObject({ delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 3 } });
    const record = p.serving.traffic.find(id.slice(4))!;
    expect(record).toMatchObject({ phase: 'done', commandId: id.slice(4), api: 'anthropic-messages', completionTokens: 3 });
    const ttft = ExoTraffic.ttftOf(record)!;
    expect(ttft.totalMs).toBeGreaterThan(0);
    expect(exoRecord(record, { instance: null, node: null })).toMatchObject({ api: 'anthropic-messages', outcome: 'done', id: id.slice(4) });
  });

  it("passes exo's tool_use block through whole (one input_json_delta) and counts it as the answer's output", async () => {
    p.exo.chat.answerWithToolCalls([{ id: 'call-1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const seq = dataEvents(
      await readRawSse(
        await messages({
          model: LLAMA_1B,
          max_tokens: 4,
          stream: true,
          tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
          messages: [{ role: 'user', content: 'weather?' }],
        }),
      ),
    );
    expect(seq.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(seq[1]).toMatchObject({ content_block: { type: 'tool_use', id: 'toolu_call-1', name: 'get_weather', input: {} } });
    expect(seq[2]).toMatchObject({ delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } });
    expect(seq[4]).toMatchObject({ delta: { stop_reason: 'tool_use' } });
    const record = p.serving.traffic.find((seq[0]!.message as { id: string }).id.slice(4))!;
    expect(record).toMatchObject({ phase: 'done', api: 'anthropic-messages' });
    expect(record.firstTokenAt).not.toBeNull();
  });

  it("answers a whole message with exo's body, its id msg_<command id>", async () => {
    const res = await messages({ model: LLAMA_1B, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; content: unknown; stop_reason: string; usage: { output_tokens: number } };
    expect(body).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'tok0 tok1 ' }], stop_reason: 'max_tokens', usage: { output_tokens: 2 } });
    expect(p.serving.traffic.find(body.id.slice(4))).toMatchObject({ phase: 'done', api: 'anthropic-messages' });
  });

  it('sends only the fields exo declares and names the rest', async () => {
    const res = await messages({
      model: LLAMA_1B,
      max_tokens: 1,
      metadata: { user_id: 'u' },
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: 'hi', cache_control: { type: 'ephemeral' } }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-exobar-dropped-fields')).toBe('tool_choice, messages[0].cache_control');
  });

  it('cancels by POST /v1/cancel/msg_<command id> at exo, and the stream ends as Anthropic streams end', async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const res = await messages({ model: LLAMA_3B, max_tokens: 3, stream: true, messages: [{ role: 'user', content: promptText(20_000, 'm-cancel') }] });
      const done = readRawSse(res);
      const record = await dialect.requestAtExo('anthropic-messages', 'the message at exo');
      const cancel = await fetch(`${p.rig.url}/v1/cancel/msg_${record.commandId}`, { method: 'POST' });
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ cancelled: true, held_by_exobar: false, exo: { status: 200 } });
      const seq = dataEvents(await done);
      expect(seq.map((e) => e.type)).toEqual(['message_start', 'message_delta', 'message_stop']);
      expect(p.serving.traffic.find(record.commandId!)).toMatchObject({ phase: 'cancelled', api: 'anthropic-messages' });
      expect(exoRecord(p.serving.traffic.find(record.commandId!)!, { instance: null, node: null })).toMatchObject({ outcome: 'cancelled', cancelledBy: 'cancel_api' });
    });
  });

  it('cancels at exo when the client goes away', async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const abort = new AbortController();
      const res = await messages({ model: LLAMA_3B, max_tokens: 3, stream: true, messages: [{ role: 'user', content: promptText(20_000, 'm-gone') }] }, abort.signal);
      const record = await dialect.requestAtExo('anthropic-messages', 'the message at exo');
      await dialect.leaveAndExpectCancelAtExo(record, abort, res);
    });
  });

  it('holds a second message to a prefilling model in exobar until the first token', async () => {
    const held = await dialect.expectSecondHeldUntilFirstToken({
      model: LLAMA_3B,
      api: 'anthropic-messages',
      what: 'message',
      salt: 'm-hold',
      send: (tokens, salt) =>
        messages({ model: LLAMA_3B, max_tokens: 2, stream: true, messages: [{ role: 'user', content: promptText(tokens, salt) }] }).then(readRawSse),
      expectFinished: (lines) => expect(dataEvents(lines).at(-1)!.type).toBe('message_stop'),
    });
    expect(held.heldMs).toBeGreaterThan(0);
  });

  it("refuses a body exo would not take, in Anthropic's error shape, before exo sees it", async () => {
    const res = await messages({ model: LLAMA_1B, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});

describe('a dialect exo does not serve', () => {
  it('answers 404 naming what exo serves, for an exo model', async () => {
    const res = await dialect.post('/v1/completions', { model: LLAMA_1B, prompt: 'hi' });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_served_by_exo');
    expect(body.error.message).toContain('exo serves POST /v1/chat/completions, POST /v1/messages and POST /v1/responses');
    const count = await dialect.post('/v1/messages/count_tokens', { model: LLAMA_1B, messages: [] });
    expect(count.status).toBe(404);
    expect(await count.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});
