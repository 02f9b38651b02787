/**
 * Serving through exobar on exo, end to end: a real `exobar serve --exo URL` process,
 * the official `openai` client through it to the serving fake exo (blocking worker, as
 * stock exo), and what `/api/state` shows for the exo instances: each proxied
 * request's phase, prefill progress and TTFT parts, observed flags, held requests, the
 * stall warning when a request bypasses exobar; cancels by abort and by /v1/cancel;
 * Stop on an exo instance deletes it on exo.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { SnapshotSchema, type Snapshot } from '../../../../shared/snapshot';
import { startServe, type ServeProcess } from '../../../../test/support/e2e/serve-process';
import { LLAMA_1B, LLAMA_3B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';

const prompt = (tokens: number, salt: string) => [{ role: 'user' as const, content: makePrompt(tokens, salt)[0]!.content }];

async function state(serve: ServeProcess): Promise<Snapshot> {
  const response = await fetch(`${serve.url}/api/state`, { headers: { Authorization: `Bearer ${serve.token}` } });
  return SnapshotSchema.parse(await response.json());
}

const exoInstance = (s: Snapshot, model: string) => {
  const found = s.instances.find((i) => i.source === 'exo' && i.model === model);
  return found?.source === 'exo' ? found : undefined;
};

/** Reads a stream to its end (or its abort); the chunks. */
async function drain(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<OpenAI.Chat.Completions.ChatCompletionChunk[]> {
  const chunks = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch {
    // an aborted stream
  }
  return chunks;
}

interface Pair {
  exo: ServingExo;
  serve: ServeProcess;
  openai: OpenAI;
}

async function startPair(timeScale: number): Promise<Pair> {
  const exo = await startServingExo({ mode: 'blocking', timeScale });
  const serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url] });
  await eventually(async () => exoInstance(await state(serve), LLAMA_3B), 20_000, 'exo instances in /api/state');
  return { exo, serve, openai: new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 }) };
}

/** A serve process attached to its own blocking fake exo for the describe block; the getter reads them once started. */
function usePair(timeScale: number): () => Pair {
  let pair: Pair | null = null;
  beforeAll(async () => {
    pair = await startPair(timeScale);
  }, 60_000);
  afterAll(async () => {
    await pair?.serve.stop();
    await pair?.exo.close();
  });
  return () => pair!;
}

describe('exobar serve --exo: proxied requests in /api/state', () => {
  const pair = usePair(0.1);
  let exo: ServingExo;
  let serve: ServeProcess;
  let openai: OpenAI;
  beforeAll(() => ({ exo, serve, openai } = pair()));

  it('streams through exobar and shows the prefill progress, then the TTFT parts, under the exo instance', async () => {
    // 3B at 1590 tok/s, time scale 0.1: about 2.5 s of prefill in 4096-token chunks,
    // held after its first chunk until the checks during the prefill are done.
    const release = exo.worker.holdPrefills(LLAMA_3B);
    const stream = await openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(40_000, 'state-a'), max_tokens: 4, stream: true });
    const done = drain(stream);
    const during = await eventually(
      async () => {
        const i = exoInstance(await state(serve), LLAMA_3B);
        return i?.prefill && i.prefill.processedTokens > 0 && i.prefill.processedTokens < 40_000 ? i : null;
      },
      20_000,
      'prefill progress of the proxied request',
    ).catch((error: unknown) => {
      release();
      throw error;
    });
    // exo's prefill counts one token less than the prompt (its last is read with the first decode step).
    expect(during.prefill!.totalTokens).toBe(39_999);
    // Until exo's usage comes the row's prompt is what exo's prefill reads.
    expect(during.queue.requests[0]).toMatchObject({ phase: 'prefilling', promptTokens: 39_999 });
    // exo's own task for it is the proxied request: observed, and not listed twice.
    const observed = await eventually(
      async () => exoInstance(await state(serve), LLAMA_3B)?.exo.tasks.find((t) => t.observed),
      20_000,
      'the exo task marked observed',
    ).finally(release);
    expect(exoInstance(await state(serve), LLAMA_3B)!.queue.requests.filter((r) => r.id === observed.commandId)).toHaveLength(1);
    const chunks = await done;
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('tok0 tok1 tok2 tok3 ');
    const after = await eventually(async () => exoInstance(await state(serve), LLAMA_3B)?.ttft.latest, 20_000, 'a TTFT sample');
    expect(after.requestId).toBe(chunks[0]!.id);
    expect(after.prefillMs).toBeGreaterThan(1000);
    expect(after.waitMs + after.prefillMs + after.firstTokenMs).toBeCloseTo(after.totalMs, 3);
    expect(after.promptTokens).toBe(40_000);
  });

  it('answers a whole completion with exo’s body', async () => {
    const completion = await openai.chat.completions.create({ model: LLAMA_1B, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    expect(completion.choices[0]!.message.content).toBe('tok0 tok1 tok2 ');
    const models = [];
    for await (const model of openai.models.list()) models.push(model.id);
    expect(models).toEqual(expect.arrayContaining([LLAMA_1B, LLAMA_3B]));
  });

  it('holds a second request to a prefilling model in exobar (queued in /api/state), and another model is not stalled', async () => {
    // The 3B's prefill stays open until the checks below are done: nothing races its length.
    const release = exo.worker.holdPrefills(LLAMA_3B);
    try {
      const first = drain(await openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(40_000, 'hold-a'), max_tokens: 2, stream: true }));
      await eventually(async () => exoInstance(await state(serve), LLAMA_3B)?.prefill, 20_000, 'the first prefill');
      // Not awaited: a held request gets its response headers only once exobar sends it on.
      const second = openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(100, 'hold-b'), max_tokens: 2, stream: true }).then(drain);
      const held = await eventually(
        async () => exoInstance(await state(serve), LLAMA_3B)?.queue.requests.find((r) => r.phase === 'queued' && r.id.startsWith('exobar-')),
        20_000,
        'a request held by exobar',
      );
      expect(held).toBeDefined();
      // The other model on the same Mac answers while the 3B is still prefilling: exo's
      // blocking plan loop is not waiting on a second 3B task (had exobar sent it, the 1B
      // would get no token until the prefill ends, and it does not end before release).
      const other = await openai.chat.completions.create({ model: LLAMA_1B, messages: prompt(50, 'other'), max_tokens: 2, stream: true });
      let answered = false;
      for await (const chunk of other) {
        if (chunk.choices[0]?.delta.content) {
          answered = true;
          break;
        }
      }
      expect(answered).toBe(true);
      expect(exoInstance(await state(serve), LLAMA_3B)?.prefill?.totalTokens).toBe(39_999);
      expect((await state(serve)).warnings.map((w) => w.code)).not.toContain('exo_dispatch_stall');
      release();
      expect((await first).length).toBe(2);
      expect((await second).length).toBe(2);
    } finally {
      release();
    }
  });

  it('cancels by /v1/cancel and by abort, at exo', async () => {
    // The prefill is held open until the cancel is answered: it cannot end first.
    const release = exo.worker.holdPrefills(LLAMA_3B);
    try {
      const stream = await openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(60_000, 'cancel'), max_tokens: 3, stream: true });
      const done = drain(stream);
      // The prefilling request's id is exo's command id once exobar has read it from exo's task list.
      const id = await eventually(
        async () => {
          const prefill = exoInstance(await state(serve), LLAMA_3B)?.prefill;
          return prefill?.totalTokens === 59_999 && !prefill.requestId.startsWith('exobar-') ? prefill.requestId : null;
        },
        20_000,
        'the command id',
      );
      const answer = await fetch(`${serve.url}/v1/cancel/${id}`, { method: 'POST' });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ cancelled: true, exo: { status: 200 } });
      await done;
    } finally {
      release();
    }
    await eventually(() => exo.worker.openCommands().length === 0, 20_000, 'exo to drop the cancelled request');

    const controller = new AbortController();
    const aborted = drain(
      await openai.chat.completions.create({ model: LLAMA_3B, messages: prompt(60_000, 'abort'), max_tokens: 3, stream: true }, { signal: controller.signal }),
    );
    await eventually(() => exo.worker.openCommands().length === 1, 20_000, 'exo to have the request');
    controller.abort();
    await aborted;
    await eventually(() => exo.worker.openCommands().length === 0, 20_000, 'exobar to cancel it at exo');
    await eventually(async () => (exoInstance(await state(serve), LLAMA_3B)?.queue.requests.length ?? 1) === 0, 20_000, 'the instance queue to empty');
  });

  it('Stop on an exo instance deletes it on exo', async () => {
    const response = await fetch(`${serve.url}/api/instances/${encodeURIComponent(`exo:${LLAMA_1B}`)}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${serve.token}` },
    });
    expect(response.status).toBe(200);
    expect(exo.cluster.instancesOf(LLAMA_1B)).toHaveLength(0);
    await eventually(async () => !exoInstance(await state(serve), LLAMA_1B), 20_000, 'the instance gone from /api/state');
    // Again, now that exo runs none of it: not found, not a malformed id.
    const again = await fetch(`${serve.url}/api/instances/${encodeURIComponent(`exo:${LLAMA_1B}`)}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${serve.token}` },
    });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'instance_not_found',
      message: `No instance exo:${LLAMA_1B}: exo runs no instance of ${LLAMA_1B}`,
    });
    const local = await fetch(`${serve.url}/api/instances/nope`, { method: 'DELETE', headers: { Authorization: `Bearer ${serve.token}` } });
    expect(local.status).toBe(404);
  });
});

describe('exobar serve --exo: the stall diagnosed when a request bypasses exobar', () => {
  const pair = usePair(0.25);
  let exo: ServingExo;
  let serve: ServeProcess;
  let openai: OpenAI;
  beforeAll(() => ({ exo, serve, openai } = pair()));

  it('names both models in exo_dispatch_stall', async () => {
    const controller = new AbortController();
    // A long prompt on the 3B through exobar: about 9 s of prefill at time scale 0.25,
    // held open after its first chunk until the warning is read, however slow the machine.
    const release = exo.worker.holdPrefills(LLAMA_3B);
    onTestFinished(release);
    const long = drain(
      await openai.chat.completions.create(
        { model: LLAMA_3B, messages: prompt(60_000, 'stall-long'), max_tokens: 2, stream: true },
        { signal: controller.signal },
      ),
    );
    await eventually(async () => exoInstance(await state(serve), LLAMA_3B)?.prefill, 20_000, 'the long prefill');
    // A second 3B request straight to exo: exo's plan loop now waits for the 3B's acknowledgement.
    const bypass = fetch(`${exo.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_3B, messages: prompt(50, 'bypass'), max_tokens: 1, stream: true }),
      signal: controller.signal,
    }).catch(() => null);
    await eventually(() => exo.worker.openCommands().length === 2, 20_000, 'exo to have the bypassing request');
    const short = drain(
      await openai.chat.completions.create(
        { model: LLAMA_1B, messages: prompt(50, 'stall-short'), max_tokens: 2, stream: true },
        { signal: controller.signal },
      ),
    );
    const warning = await eventually(async () => (await state(serve)).warnings.find((w) => w.code === 'exo_dispatch_stall'), 20_000, 'exo_dispatch_stall');
    expect(warning.instanceIds).toEqual([`exo:${LLAMA_1B}`, `exo:${LLAMA_3B}`]);
    expect(warning.title).toContain(LLAMA_1B);
    expect(warning.title).toContain(LLAMA_3B);
    expect(warning.risk).toContain('that exobar did not send');
    expect(warning.fix).toContain('exo PR 2348');
    release();
    controller.abort();
    await Promise.all([long, short, bypass]);
  });
});
