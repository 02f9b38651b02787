/**
 * The proxy with the official `openai` client through exobar (the real core) to the
 * serving fake exo, over real HTTP: streams pass through with exo's comments, whole
 * answers are exo's body, models list both sources, cancels by /v1/cancel and by
 * abort reach exo, garbage is refused before exo, and each proxied request is recorded
 * with its phase, prefill and TTFT parts.
 */
import { describe, expect, it } from 'vitest';
import { APIError } from 'openai';
import { readRawSse } from '../../../../test/support/api-harness';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { dialectTestRig, promptText } from '../../../../test/support/exo-dialect-tests';
import { ExoTraffic } from './exo-traffic';
import { eventually } from '../../../../test/support/eventually';

const dialect = dialectTestRig({ timeScale: 0.05 });
const p = dialect.p;

/** A user message of exactly `tokens` prompt tokens, typed for the openai client. */
const prompt = (tokens: number, salt: string) => [{ role: 'user' as const, content: promptText(tokens, salt) }];

const raw = (body: Record<string, unknown>) => dialect.post('/v1/chat/completions', body);

describe('proxy to exo', () => {
  it('streams exo chunks through the openai client and records phase, prefill, TTFT parts and generation_stats', async () => {
    const stream = await p.openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(9000, 'stream-a'), max_tokens: 5, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(5);
    const id = chunks[0]!.id;
    expect(chunks.map((c) => c.choices[0]!.delta.content).join('')).toBe('tok0 tok1 tok2 tok3 tok4 ');
    const record = p.serving.traffic.find(id)!;
    expect(record).toMatchObject({ phase: 'done', commandId: id, model: LLAMA_3B, processedTokens: 8999, totalTokens: 8999, completionTokens: 5 });
    expect(record.generationStats).toMatchObject({ prompt_tokens: 9000, generation_tokens: 5 });
    const ttft = ExoTraffic.ttftOf(record)!;
    expect(ttft.prefillMs).toBeGreaterThan(0);
    expect(ttft.waitMs + ttft.prefillMs + ttft.firstTokenMs).toBeCloseTo(ttft.totalMs, 5);
    const instanceId = [...p.client.reading.instances!.values()].find((i) => i.modelId === LLAMA_3B)!.instanceId;
    expect(p.serving.traffic.instanceView(instanceId).ttft.latest?.requestId).toBe(id);
    expect(p.serving.traffic.isObserved(id)).toBe(true);
  });

  it('passes the stream through byte for byte, comments included', async () => {
    const lines = await readRawSse(await raw({ model: LLAMA_1B, messages: prompt(5000, 'raw'), max_tokens: 2, stream: true }));
    expect(lines[0]).toBe(': keep-alive');
    // 5000 prompt tokens: exo reports 0, 4096, 4998, then 4999 with the first token.
    expect(lines.filter((l) => l.startsWith(': prefill_progress {"PrefillProgressChunk":'))).toHaveLength(4);
    expect(lines.some((l) => l.startsWith(': generation_stats {'))).toBe(true);
    expect(lines.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(lines.find((l) => l.startsWith('data: {'))!.slice(6)).object).toBe('chat.completion');
  });

  it("returns exo's body for a whole completion", async () => {
    const completion = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    expect(completion.choices[0]!.message.content).toBe('tok0 tok1 tok2 ');
    expect(p.serving.traffic.find(completion.id)).toMatchObject({ phase: 'done', completionTokens: 3 });
  });

  it('lists local and exo models', async () => {
    const ids = [];
    for await (const model of p.openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining([LLAMA_1B, LLAMA_3B]));
  });

  it('cancels through /v1/cancel on the exo node that received the request, and says exo took it', async () => {
    const stream = await p.openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(60_000, 'cancel-me'), max_tokens: 3, stream: true });
    const it = stream[Symbol.asyncIterator]();
    // exo's command id is learned from its task list while the prompt prefills.
    const record = await eventually(
      () => p.serving.traffic.active().find((r) => r.model === LLAMA_3B && r.commandId && r.phase === 'prefilling'),
      5000,
      'a prefilling record with its command id',
    );
    const answer = await fetch(`${p.rig.url}/v1/cancel/${record.commandId}`, { method: 'POST' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      cancelled: true,
      held_by_exobar: false,
      exo: { status: 200, body: { message: 'Command cancelled.', command_id: record.commandId }, url: p.exo.url },
    });
    // exo just closes a cancelled stream; exobar ends it as a cancelled local stream ends.
    const last = await it.next();
    expect(last.done).toBe(false);
    expect(last.value).toMatchObject({ id: record.commandId, choices: [{ finish_reason: 'cancelled' }] });
    expect((await it.next()).done).toBe(true);
    expect(p.serving.traffic.find(record.commandId!)).toMatchObject({ phase: 'cancelled' });
    expect(p.exo.worker.openCommands()).toEqual([]);
  });

  it('cancels the exo request when the client aborts', async () => {
    const controller = new AbortController();
    const stream = await p.openai.chat.completions.create(
      { model: LLAMA_3B, messages: prompt(60_000, 'abort-me'), max_tokens: 3, stream: true },
      { signal: controller.signal },
    );
    await eventually(() => p.exo.worker.openCommands().length === 1, 5000, 'exo to have the request');
    controller.abort();
    try {
      for await (const chunk of stream) void chunk;
    } catch {
      // the client's own abort error
    }
    await eventually(() => p.exo.worker.openCommands().length === 0, 5000, 'exo to cancel the request');
    expect(p.serving.traffic.records().at(-1)).toMatchObject({ phase: 'cancelled', reason: 'the client went away' });
  });

  it("refuses garbage with exobar's own 400 and forwards nothing", async () => {
    const before = p.exo.hits.get('/v1/chat/completions') ?? 0;
    const bad = await fetch(`${p.rig.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": "x", ' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    const wrong = await raw({ model: LLAMA_1B, messages: 'hello' });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: unknown }).error).toMatchObject({ code: 'invalid_request', param: 'messages' });
    expect(p.exo.hits.get('/v1/chat/completions') ?? 0).toBe(before);
  });

  it("falls through to exobar's own routes for a model exo does not serve", async () => {
    const error = await p.openai.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(404);
    expect((error as APIError).code).toBe('model_not_found');
  });

  it('passes other exo endpoints under /v1/ through', async () => {
    const models = await fetch(`${p.rig.url}/v1/models?status=downloaded`);
    expect(models.status).toBe(200);
    const other = await fetch(`${p.rig.url}/v1/feature-flags`);
    // The fake exo has no such route: FastAPI's own 404 comes back unchanged.
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ detail: 'Not Found' });
  });
});
