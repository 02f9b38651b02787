/**
 * exobar's Ollama API for an exo model, through exobar (the real core) to the serving fake exo's
 * `/ollama/api/*`, over real HTTP: exo's NDJSON passes through, the record logs as `ollama-chat`
 * / `ollama-generate` with its TTFT and takes exo's command id from exo's task list (no line
 * names it), a cancel by that id and a client gone cancel at exo, a second request waits in
 * exobar's hold, only exo's declared fields go on, and `/api/tags` and `/api/ps` list exo's
 * models beside the local ones.
 */
import { describe, expect, it } from 'vitest';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';
import { dialectTestRig, promptText } from '../../../../test/support/exo-dialect-tests';
import { exoRecord } from '../../request-log/request-feed';
import { ExoTraffic } from './exo-traffic';

const dialect = dialectTestRig({ timeScale: 0.05 });
const p = dialect.p;

const post = dialect.post;

const lines = async (res: Response) =>
  (await res.text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("Ollama's API on exo, through exobar", () => {
  it("streams exo's NDJSON for /api/chat, recorded as ollama-chat with its TTFT", async () => {
    const res = await post('/api/chat', { model: LLAMA_3B, options: { num_predict: 3 }, messages: [{ role: 'user', content: promptText(5000, 'o-a') }] });
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const seq = await lines(res);
    expect(seq.map((l) => l.done)).toEqual([false, false, true]);
    expect(seq[0]).toMatchObject({ model: LLAMA_3B, message: { role: 'assistant', content: 'tok0 ' } });
    expect(seq[2]).toMatchObject({ done_reason: 'length', eval_count: 3 });
    const record = await eventually(() => p.serving.traffic.records().find((r) => r.api === 'ollama-chat' && r.phase === 'done'), 20_000, 'the record');
    expect(record).toMatchObject({ completionTokens: 3, model: LLAMA_3B });
    expect(ExoTraffic.ttftOf(record)!.totalMs).toBeGreaterThan(0);
    expect(exoRecord(record, { instance: null, node: null })).toMatchObject({ api: 'ollama-chat', outcome: 'done' });
  });

  it('answers /api/generate whole with stream false, recorded as ollama-generate', async () => {
    const res = await post('/api/generate', { model: LLAMA_1B, prompt: 'hi', stream: false, options: { num_predict: 2 } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ model: LLAMA_1B, response: 'tok0 tok1 ', done: true, done_reason: 'length', eval_count: 2 });
    await eventually(() => p.serving.traffic.records().find((r) => r.api === 'ollama-generate' && r.phase === 'done'), 20_000, 'the record');
  });

  it("passes exo's tool call line through as exo's Ollama adapter writes it", async () => {
    p.exo.chat.answerWithToolCalls([{ id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const seq = await lines(
      await post('/api/chat', { model: LLAMA_1B, options: { num_predict: 4 }, messages: [{ role: 'user', content: 'weather?' }], tools: [] }),
    );
    expect(seq).toHaveLength(1);
    expect(seq[0]).toMatchObject({
      done: true,
      done_reason: 'tool_call',
      message: { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' }, index: 0 } }] },
    });
  });

  it('sends only the fields exo declares and names the rest', async () => {
    const res = await post('/api/chat', {
      model: LLAMA_1B,
      stream: false,
      keep_alive: '5m',
      options: { num_predict: 1, num_ctx: 4096 },
      messages: [{ role: 'user', content: 'hi', extra: 1 }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-exobar-dropped-fields')).toBe('options.num_ctx, messages[0].extra');
  });

  it("cancels by POST /v1/cancel/{command id} at exo (the id from exo's task list), and the stream ends with done_reason cancelled", async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const res = await post('/api/chat', { model: LLAMA_3B, options: { num_predict: 3 }, messages: [{ role: 'user', content: promptText(20_000, 'o-cancel') }] });
      const done = lines(res);
      const record = await dialect.requestAtExo('ollama-chat', 'the chat at exo');
      const cancel = await fetch(`${p.rig.url}/v1/cancel/${record.commandId}`, { method: 'POST' });
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ cancelled: true, exo: { status: 200 } });
      expect((await done).at(-1)).toMatchObject({ done: true, done_reason: 'cancelled' });
      expect(exoRecord(p.serving.traffic.find(record.commandId!)!, { instance: null, node: null })).toMatchObject({
        outcome: 'cancelled',
        cancelledBy: 'cancel_api',
      });
    });
  });

  it('cancels at exo when the client goes away', async () => {
    await dialect.whilePrefillsHeld(LLAMA_3B, async () => {
      const abort = new AbortController();
      const res = await post('/api/generate', { model: LLAMA_3B, options: { num_predict: 3 }, prompt: promptText(20_000, 'o-gone') }, abort.signal);
      const record = await dialect.requestAtExo('ollama-generate', 'the generate at exo');
      await dialect.leaveAndExpectCancelAtExo(record, abort, res);
    });
  });

  it('holds a second chat to a prefilling model in exobar until the first token', async () => {
    await dialect.expectSecondHeldUntilFirstToken({
      model: LLAMA_3B,
      api: 'ollama-chat',
      what: 'chat',
      salt: 'o-hold',
      send: (tokens, salt) =>
        post('/api/chat', { model: LLAMA_3B, options: { num_predict: 2 }, messages: [{ role: 'user', content: promptText(tokens, salt) }] }).then(lines),
      expectFinished: (answer) => expect(answer.at(-1)).toMatchObject({ done: true }),
    });
  });

  it("lists exo's models in /api/tags and /api/ps beside the local ones", async () => {
    const tags = (await (await fetch(`${p.rig.url}/api/tags`)).json()) as { models: Array<{ name: string; details: { format: string } }> };
    expect(tags.models.find((m) => m.name === LLAMA_3B)).toMatchObject({ details: { format: 'exo' } });
    expect(tags.models.some((m) => m.details.format !== 'exo')).toBe(true);
    const ps = (await (await fetch(`${p.rig.url}/api/ps`)).json()) as { models: Array<{ name: string }> };
    expect(ps.models.map((m) => m.name)).toContain(LLAMA_3B);
  });

  it("refuses a body exo would not take, in Ollama's error shape, before exo sees it", async () => {
    const res = await post('/api/chat', { model: LLAMA_1B, messages: 'hi' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: expect.any(String) });
  });
});
