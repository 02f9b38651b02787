/**
 * OpenAI Responses for an exo model, through exobar (the real core) to the serving fake exo,
 * over real HTTP: exo's own event sequence passes through, the record takes exo's command id
 * from `resp_<command id>` and logs as `openai-responses`, `POST /v1/cancel/resp_…` and a
 * client gone cancel at exo, a second request waits in exobar's hold while its model
 * prefills, only exo's declared fields go on, and the request's row is counted by api in `/metrics`.
 */
import { describe, expect, it } from 'vitest';
import { readRawSse } from '../../../../test/support/api-harness';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { dataEvents, dialectTestRig, promptText } from '../../../../test/support/exo-dialect-tests';
import { exoRecord } from '../../request-log/request-feed';
import { ExobarMetrics } from '../../metrics/exobar-metrics';
import { ExoTraffic } from './exo-traffic';

const dialect = dialectTestRig({ timeScale: 0.05 });
const p = dialect.p;

const responses = (body: Record<string, unknown>, signal?: AbortSignal) => dialect.post('/v1/responses', body, signal);

describe('OpenAI Responses on exo, through exobar', () => {
  it("streams exo's own events, and records the request by exo's command id as openai-responses", async () => {
    const lines = await readRawSse(await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: promptText(5000, 'r-a') }));
    expect(lines[0]).toBe(': keep-alive');
    expect(lines.some((l) => l.startsWith(': prefill_progress'))).toBe(false);
    const seq = dataEvents(lines);
    expect(seq.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(seq.map((e) => e.sequence_number)).toEqual(seq.map((_e, i) => i + 1));
    const id = (seq[0]!.response as { id: string }).id;
    expect(id).toMatch(/^resp_/);
    const commandId = id.slice(5);
    expect(seq[2]).toMatchObject({ item: { type: 'message', id: `item_${commandId}`, status: 'in_progress' } });
    expect(seq.at(-1)).toMatchObject({ response: { status: 'completed', usage: { output_tokens: 3 } } });
    const record = p.serving.traffic.find(commandId)!;
    expect(record).toMatchObject({ phase: 'done', commandId, api: 'openai-responses', completionTokens: 3 });
    expect(ExoTraffic.ttftOf(record)!.totalMs).toBeGreaterThan(0);
    expect(exoRecord(record, { instance: null, node: null })).toMatchObject({ api: 'openai-responses', outcome: 'done', id: commandId });
    const metrics = new ExobarMetrics({ snapshot: () => p.rig.core.node.snapshot(), mac: 'mac' });
    metrics.observeRequest(exoRecord(record, { instance: null, node: null }));
    expect((await metrics.scrape()).text).toMatch(/exobar_requests_total\{[^}]*api="openai-responses"[^}]*outcome="done"/);
  });

  it("passes exo's function call through whole (fc_/call_ ids, one arguments delta) and counts it as the answer's output", async () => {
    p.exo.chat.answerWithToolCalls([{ id: 'abc', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const seq = dataEvents(
      await readRawSse(
        await responses({
          model: LLAMA_1B,
          max_output_tokens: 4,
          stream: true,
          tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
          input: [{ role: 'user', content: 'weather?' }],
        }),
      ),
    );
    expect(seq.map((e) => e.type).slice(2, 6)).toEqual([
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
    ]);
    expect(seq[2]).toMatchObject({ item: { type: 'function_call', id: 'fc_abc', call_id: 'call_abc', name: 'get_weather', arguments: '' } });
    expect(seq[3]).toMatchObject({ delta: '{"city":"Paris"}' });
    const record = p.serving.traffic.find((seq[0]!.response as { id: string }).id.slice(5))!;
    expect(record).toMatchObject({ phase: 'done', api: 'openai-responses' });
    expect(record.firstTokenAt).not.toBeNull();
  });

  it("answers a whole response with exo's body, its id resp_<command id>", async () => {
    const res = await responses({ model: LLAMA_1B, max_output_tokens: 2, input: 'hi' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; output_text: string; usage: { output_tokens: number } };
    expect(body).toMatchObject({ object: 'response', status: 'completed', output_text: 'tok0 tok1 ', usage: { output_tokens: 2 } });
    expect(p.serving.traffic.find(body.id.slice(5))).toMatchObject({ phase: 'done', api: 'openai-responses', completionTokens: 2 });
  });

  it('sends only the fields exo declares and names the rest', async () => {
    const res = await responses({ model: LLAMA_1B, max_output_tokens: 1, input: 'hi', store: false, tool_choice: 'auto', chat_template_messages: [] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-exobar-dropped-fields')).toBe('store, tool_choice, chat_template_messages');
  });

  it('cancels by POST /v1/cancel/resp_<command id> at exo, and the stream ends as response.incomplete', async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const res = await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: promptText(20_000, 'r-cancel') });
      const done = readRawSse(res);
      const record = await dialect.requestAtExo('openai-responses', 'the response at exo');
      const cancel = await fetch(`${p.rig.url}/v1/cancel/resp_${record.commandId}`, { method: 'POST' });
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ cancelled: true, held_by_exobar: false, exo: { status: 200 } });
      const seq = dataEvents(await done);
      expect(seq.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.incomplete']);
      expect(seq[2]).toMatchObject({ response: { status: 'incomplete', incomplete_details: { reason: 'cancelled' } } });
      expect(exoRecord(p.serving.traffic.find(record.commandId!)!, { instance: null, node: null })).toMatchObject({
        outcome: 'cancelled',
        cancelledBy: 'cancel_api',
      });
    });
  });

  it('cancels at exo when the client goes away', async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const abort = new AbortController();
      const res = await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: promptText(20_000, 'r-gone') }, abort.signal);
      const record = await dialect.requestAtExo('openai-responses', 'the response at exo');
      await dialect.leaveAndExpectCancelAtExo(record, abort, res);
    });
  });

  it('holds a second response to a prefilling model in exobar until the first token', async () => {
    await dialect.expectSecondHeldUntilFirstToken({
      model: LLAMA_3B,
      api: 'openai-responses',
      what: 'response',
      salt: 'r-hold',
      send: (tokens, salt) => responses({ model: LLAMA_3B, max_output_tokens: 2, stream: true, input: promptText(tokens, salt) }).then(readRawSse),
      expectFinished: (lines) => expect(dataEvents(lines).at(-1)!.type).toBe('response.completed'),
    });
  });

  it('refuses a body exo would not take before exo sees it', async () => {
    const res = await responses({ model: LLAMA_1B });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
