/**
 * OpenAI Responses for an exo model, through exobar (the real core) to the serving fake exo,
 * over real HTTP: exo's own event sequence passes through, the record takes exo's command id
 * from `resp_<command id>` and logs as `openai-responses`, `POST /v1/cancel/resp_…` and a
 * client gone cancel at exo, a second request waits in exobar's hold while its model
 * prefills, only exo's declared fields go on, and the request's row is counted by api in `/metrics`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { readRawSse } from '../../../../test/support/api-harness';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { eventually } from '../../../../test/support/eventually';
import { exoRecord } from '../../request-log/request-feed';
import { ExobarMetrics } from '../../metrics/exobar-metrics';
import { ExoTraffic } from './exo-traffic';

let p: ProxyRig;
beforeAll(async () => {
  p = await startProxyRig({ timeScale: 0.05 });
});
afterAll(async () => {
  await p?.close();
});

const text = (tokens: number, salt: string) => makePrompt(tokens, salt)[0]!.content;

const responses = (body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${p.rig.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });

/** The `data:` payloads of a Responses event stream, in order. */
const events = (lines: string[]) => lines.filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; [k: string]: unknown });

describe('OpenAI Responses on exo, through exobar', () => {
  it("streams exo's own events, and records the request by exo's command id as openai-responses", async () => {
    const lines = await readRawSse(await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: text(5000, 'r-a') }));
    expect(lines[0]).toBe(': keep-alive');
    expect(lines.some((l) => l.startsWith(': prefill_progress'))).toBe(false);
    const seq = events(lines);
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
    const seq = events(
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
    const release = p.exo.worker.holdPrefills(LLAMA_3B);
    try {
      const res = await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: text(20_000, 'r-cancel') });
      const done = readRawSse(res);
      const record = await eventually(() => p.serving.traffic.active().find((r) => r.api === 'openai-responses' && r.commandId), 20_000, 'the response at exo');
      const cancel = await fetch(`${p.rig.url}/v1/cancel/resp_${record.commandId}`, { method: 'POST' });
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ cancelled: true, held_by_exobar: false, exo: { status: 200 } });
      const seq = events(await done);
      expect(seq.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.incomplete']);
      expect(seq[2]).toMatchObject({ response: { status: 'incomplete', incomplete_details: { reason: 'cancelled' } } });
      expect(exoRecord(p.serving.traffic.find(record.commandId!)!, { instance: null, node: null })).toMatchObject({
        outcome: 'cancelled',
        cancelledBy: 'cancel_api',
      });
    } finally {
      release();
    }
  });

  it('cancels at exo when the client goes away', async () => {
    const release = p.exo.worker.holdPrefills(LLAMA_3B);
    try {
      const abort = new AbortController();
      const res = await responses({ model: LLAMA_3B, max_output_tokens: 3, stream: true, input: text(20_000, 'r-gone') }, abort.signal);
      const record = await eventually(() => p.serving.traffic.active().find((r) => r.api === 'openai-responses' && r.commandId), 20_000, 'the response at exo');
      abort.abort();
      await res.body?.cancel().catch(() => undefined);
      await eventually(() => p.serving.traffic.find(record.commandId!)?.phase === 'cancelled' || undefined, 20_000, 'the cancel');
      await eventually(() => !p.exo.worker.openCommands().some((c) => c.commandId === record.commandId) || undefined, 20_000, "exo's command ended");
    } finally {
      release();
    }
  });

  it('holds a second response to a prefilling model in exobar until the first token', async () => {
    const release = p.exo.worker.holdPrefills(LLAMA_3B);
    try {
      const first = responses({ model: LLAMA_3B, max_output_tokens: 2, stream: true, input: text(20_000, 'r-hold-a') }).then(readRawSse);
      await eventually(() => p.serving.traffic.active().find((r) => r.api === 'openai-responses' && r.commandId), 20_000, 'the first response at exo');
      const second = responses({ model: LLAMA_3B, max_output_tokens: 2, stream: true, input: text(100, 'r-hold-b') }).then(readRawSse);
      const held = await eventually(() => p.serving.traffic.active().find((r) => r.phase === 'held'), 20_000, 'a held response');
      expect(held.api).toBe('openai-responses');
      release();
      expect(events(await first).at(-1)!.type).toBe('response.completed');
      expect(events(await second).at(-1)!.type).toBe('response.completed');
    } finally {
      release();
    }
  });

  it('refuses a body exo would not take before exo sees it', async () => {
    const res = await responses({ model: LLAMA_1B });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
  });
});
