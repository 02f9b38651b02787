/**
 * A stream exo ends early when nobody cancelled stays an error. exo's answer here is the
 * real capture of a cancelled stream (test/fixtures/exo/real/stream-cancelled.sse.txt:
 * seven content chunks, then a clean close with no finish reason, no usage and no
 * [DONE]), replayed by a proxy between exobar and the fake exo; but nobody cancelled it,
 * neither by POST /v1/cancel nor by going away. The same bytes that end as a cancel when
 * exobar cancelled (exo-cancel-race.test.ts) must then reach the client as exobar's
 * `exo_stream_incomplete` error, the request recorded failed, never cancelled.
 */
import { createServer, request } from 'node:http';
import { listenOnLoopback } from '../../../../test/support/loopback-server';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRealText, LLAMA_1B, readTimedLines } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';

const REAL_CANCELLED = readRealText('stream-cancelled.sse.txt');
const REAL_ID = '3de82468-ea15-4f74-9a12-63f027c313e4';

/** Answers every chat completion with the real cancelled stream's bytes (headers as exo sent them); passes the rest on. */
async function startReplay(target: string): Promise<{ url: string; replayed: number; close(): Promise<void> }> {
  const upstream = new URL(target);
  const replay = { url: '', replayed: 0, close: () => Promise.resolve() };
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      req.resume();
      req.on('end', () => {
        replay.replayed++;
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', connection: 'close' });
        res.end(REAL_CANCELLED);
      });
      return;
    }
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  Object.assign(replay, await listenOnLoopback(server));
  return replay;
}

let p: ProxyRig;
let replay: Awaited<ReturnType<typeof startReplay>>;
beforeAll(async () => {
  p = await startProxyRig({ timeScale: 0.05, between: async (exoUrl) => (replay = await startReplay(exoUrl)) });
});
afterAll(async () => {
  await p?.close();
});

describe('a stream exo ends early when nobody cancelled', () => {
  it("reaches the client as exo's seven chunks, then exobar's exo_stream_incomplete error, and is recorded failed", async () => {
    const response = await fetch(`${p.rig.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2000, stream: true }),
    });
    expect(response.status).toBe(200);
    const data = (await readTimedLines(response)).map((l) => l.line).filter((l) => l.startsWith('data:'));
    expect(replay.replayed).toBe(1);
    // exo's chunks unchanged, then one error of exobar's; no cancelled ending, no [DONE] invented.
    expect(data.slice(0, -1)).toEqual(REAL_CANCELLED.split('\n').filter((l) => l.startsWith('data:')));
    expect(data).toHaveLength(8);
    const last = JSON.parse(data.at(-1)!.slice(6)) as { error?: { code?: string; message?: string } };
    expect(last.error).toMatchObject({ code: 'exo_stream_incomplete', message: expect.stringContaining('ended without [DONE]') });
    expect(data.some((l) => l.includes('"finish_reason":"cancelled"'))).toBe(false);
    expect(p.serving.traffic.find(REAL_ID)).toMatchObject({ phase: 'failed', reason: expect.stringContaining('ended without [DONE]') });
  });

  it('raises an error in the official openai client, not a normal end', async () => {
    const reasons: Array<string | null> = [];
    let raised: unknown = null;
    try {
      const stream = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2000, stream: true });
      for await (const chunk of stream) reasons.push(chunk.choices[0]?.finish_reason ?? null);
    } catch (error) {
      raised = error;
    }
    expect(raised).toBeInstanceOf(APIError);
    expect((raised as APIError).message).toContain('ended without [DONE]');
    expect(reasons).toEqual(Array(7).fill(null));
    expect(p.serving.traffic.records().at(-1)).toMatchObject({ phase: 'failed' });
    expect(p.serving.traffic.refusedTransitions).toBe(0);
  });
});
