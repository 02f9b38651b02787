/**
 * What passes between exobar's proxy and exo, checked at exo's side of the wire (a
 * recording proxy in front of the serving fake exo): a tool-call answer reaches the
 * client byte for byte and is measured; the body exo receives holds only the fields exo
 * declares; prefill progress comes every 4096 tokens from rank 0 only, once per chunk
 * even on a 2-Mac instance, and is what exobar records.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countPromptTokens, makePrompt } from '../../../../shared/token-count';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { FakeExoCluster, startRecordingProxy, type RecordingProxy, LLAMA_1B, QWEN_30B } from '../../../../test/support/fake-exo';
import { EXO_CHAT_FIELDS, EXO_MESSAGE_FIELDS } from './exo-declared-fields';

const FIXTURE = readFileSync(join(__dirname, '../../../../test/fixtures/exo/stream-tool-calls.sse.txt'), 'utf8');

let p: ProxyRig;
let recorder: RecordingProxy;
beforeAll(async () => {
  const cluster = new FakeExoCluster();
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 192 });
  cluster.addNode({ name: 'studio-b', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 192 });
  cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
  cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'studio-b'], ready: true });
  p = await startProxyRig({
    cluster,
    timeScale: 0.1,
    between: async (url) => (recorder = await startRecordingProxy(url)),
  });
});
afterAll(async () => {
  await p?.close();
});

/** The chat requests exo received, oldest first. */
const chatsAtExo = () => recorder.exchanges.filter((e) => e.method === 'POST' && e.path === '/v1/chat/completions');

/** An SSE text's lines by kind, in order: keep-alive, prefill_progress, data, generation_stats, DONE. */
function kinds(text: string): string[] {
  return text
    .split('\n\n')
    .filter((l) => l !== '')
    .map((l) =>
      l === ': keep-alive'
        ? 'keep-alive'
        : l === 'data: [DONE]'
          ? 'DONE'
          : l.startsWith(': ')
            ? l.slice(2, l.indexOf(' ', 2))
            : l.startsWith('data: ')
              ? 'data'
              : l,
    );
}

/** Every key path of a JSON value, arrays by their first element. */
function keyPaths(value: unknown, at = ''): string[] {
  if (Array.isArray(value)) return value.length ? keyPaths(value[0], `${at}[]`) : [`${at}[]`];
  if (value === null || typeof value !== 'object') return [at];
  return Object.entries(value).flatMap(([k, v]) => [`${at}.${k}`, ...keyPaths(v, `${at}.${k}`)]);
}

async function rawStream(body: Record<string, unknown>): Promise<{ text: string; headers: Headers }> {
  const response = await fetch(`${p.rig.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return { text: await response.text(), headers: response.headers };
}

describe('a tool-call answer through exobar', () => {
  const calls = [{ id: 'call-8f14e45f-ceea-467e-a9b1-2c6d5b3f0a91', name: 'get_weather', arguments: '{"city": "Paris"}' }];
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

  it("is exo's tool-call stream: the fixture's lines in the fixture's order, the same keys in its tool_calls chunk", async () => {
    p.exo.chat.answerWithToolCalls(calls);
    const { text } = await rawStream({ model: LLAMA_1B, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, stream: true, max_tokens: 18 });
    const squash = (k: string[]) => k.filter((x, i) => x !== k[i - 1]);
    expect(squash(kinds(text))).toEqual(squash(kinds(FIXTURE)));
    expect(kinds(text).filter((k) => k === 'data')).toHaveLength(1);
    const dataOf = (t: string) =>
      JSON.parse(
        t
          .split('\n\n')
          .find((l) => l.startsWith('data: {'))!
          .slice(6),
      ) as Record<string, unknown>;
    expect(keyPaths(dataOf(text)).sort()).toEqual(keyPaths(dataOf(FIXTURE)).sort());
  });

  it('passes the tool_calls delta on unchanged (the bytes exo sent) and measures the request', async () => {
    p.exo.chat.answerWithToolCalls(calls);
    const before = chatsAtExo().length;
    const stream = await p.openai.chat.completions.create({
      model: LLAMA_1B,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: tools as never,
      stream: true,
      max_tokens: 18,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(1);
    const choice = chunks[0]!.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.delta.tool_calls).toEqual([
      { id: calls[0]!.id, index: 0, type: 'function', function: { id: calls[0]!.id, name: 'get_weather', arguments: '{"city": "Paris"}' } },
    ]);
    expect(chunks[0]!.usage?.completion_tokens).toBe(18);

    // exobar's bytes are exo's: the recorded answer and the client's raw stream are one text.
    p.exo.chat.answerWithToolCalls(calls);
    const { text } = await rawStream({ model: LLAMA_1B, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, stream: true, max_tokens: 18 });
    const atExo = chatsAtExo().at(-1)!;
    await expect.poll(() => atExo.ended, { timeout: 10_000 }).toBe(true);
    expect(chatsAtExo().length).toBe(before + 2);
    expect(text).toBe(Buffer.concat(atExo.answer).toString('utf8'));

    const record = p.serving.traffic.find(chunks[0]!.id)!;
    expect(record).toMatchObject({ phase: 'done', completionTokens: 18 });
    // The tool call is the answer's first output: its TTFT.
    expect(record.firstTokenAt).not.toBeNull();
    expect(record.firstTokenAt!).toBeGreaterThanOrEqual(record.sentAt!);
    expect(record.generationStats?.generation_tokens).toBe(18);
  });
});

describe('the body exo receives', () => {
  it('holds only the fields exo declares, max_completion_tokens as max_tokens, and the client is told what was left out', async () => {
    const body = {
      model: LLAMA_1B,
      messages: [
        { role: 'system', content: 'Be brief.', cache_control: { type: 'ephemeral' } },
        { role: 'user', content: 'Hello', name: 'ana' },
      ],
      stream: true,
      max_completion_tokens: 5,
      temperature: 0,
      top_k: 20,
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      metadata: { team: 'ops' },
      store: false,
      stream_options: { include_usage: true },
    };
    const { text, headers } = await rawStream(body);
    const sent = JSON.parse(chatsAtExo().at(-1)!.body.toString('utf8')) as Record<string, unknown> & { messages: Array<Record<string, unknown>> };
    for (const key of Object.keys(sent)) expect(EXO_CHAT_FIELDS.has(key), `top-level ${key}`).toBe(true);
    for (const message of sent.messages) for (const key of Object.keys(message)) expect(EXO_MESSAGE_FIELDS.has(key), `message ${key}`).toBe(true);
    expect(sent).toEqual({
      model: LLAMA_1B,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello', name: 'ana' },
      ],
      stream: true,
      max_tokens: 5,
      temperature: 0,
      top_k: 20,
      tools: body.tools,
      stream_options: { include_usage: true },
    });
    expect(headers.get('x-exobar-dropped-fields')).toBe('metadata, store, messages[0].cache_control');
    // The limit the client asked for held at exo (it reads max_tokens only): 5 tokens.
    expect(kinds(text).filter((k) => k === 'data')).toHaveLength(5);
  });

  it('says nothing when nothing was left out', async () => {
    const { headers } = await rawStream({ model: LLAMA_1B, messages: [{ role: 'user', content: 'Hi' }], stream: true, max_tokens: 2 });
    expect(headers.get('x-exobar-dropped-fields')).toBeNull();
    expect(Object.keys(JSON.parse(chatsAtExo().at(-1)!.body.toString('utf8')))).toEqual(['model', 'messages', 'stream', 'max_tokens']);
  });
});

describe('prefill progress', () => {
  it('comes every 4096 tokens from rank 0 only, once per chunk on a 2-Mac instance, and exobar records it as sent', async () => {
    const messages = makePrompt(10_000, 'ranks');
    // exo's prefill counts one token less than the prompt (its last is read with the first decode step).
    const total = countPromptTokens(messages) - 1;
    expect(total).toBeGreaterThan(8_193);
    expect(total).toBeLessThan(12_288);
    const seen: Array<[number, number]> = [];
    const off = p.serving.traffic.onChange((r) => {
      if (r.model === QWEN_30B && r.firstProgressAt != null && seen.at(-1)?.[0] !== r.processedTokens) seen.push([r.processedTokens, r.totalTokens]);
    });
    const { text } = await rawStream({ model: QWEN_30B, messages, stream: true, max_tokens: 2 });
    off();
    const progress = text
      .split('\n\n')
      .filter((l) => l.startsWith(': prefill_progress '))
      .map(
        (l) =>
          (JSON.parse(l.slice(': prefill_progress '.length)) as { PrefillProgressChunk: { processed_tokens: number; total_tokens: number } })
            .PrefillProgressChunk,
      );
    // 0, then one line per chunk (4096 at most, one token always left over), then the whole
    // prompt with the first token: no second rank's copy of any of them.
    expect(progress.map((c) => c.processed_tokens)).toEqual([0, 4_096, 8_192, total - 1, total]);
    expect(new Set(progress.map((c) => c.total_tokens))).toEqual(new Set([total]));
    const instance = [...p.client.reading.instances!.values()].find((i) => i.modelId === QWEN_30B)!;
    expect(instance.shards.map((s) => s.rank)).toEqual([0, 1]);
    const record = p.serving.traffic
      .records()
      .filter((r) => r.model === QWEN_30B)
      .at(-1)!;
    expect(record).toMatchObject({ phase: 'done', processedTokens: total, totalTokens: total });
    // What exobar recorded, step by step: exactly rank 0's chunks.
    expect(seen).toEqual([0, 4_096, 8_192, total - 1, total].map((n) => [n, total]));
  });
});
