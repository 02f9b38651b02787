/**
 * Live logs over the API on the real core: the sources listed, the last lines, and a
 * followed runner log (server-sent events) where a line the runner writes shows within 1 s.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';

let rig: CoreRig;
let id = '';

beforeAll(async () => {
  rig = await startCoreRig();
  id = await rig.launch('sim/llama-3.2-1b');
});
afterAll(async () => {
  await rig?.close();
});

/** Reads SSE `data:` lines from a streaming response as they come. */
async function* sseData(response: Response): AsyncGenerator<unknown> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) !== -1) {
      const frame = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      if (data && !frame.startsWith('event:')) yield JSON.parse(data.slice(6));
    }
  }
}

describe('/api/logs', () => {
  it('lists each runner log with its model name', async () => {
    const listed = await rig.control('GET', '/api/logs');
    expect(listed.status).toBe(200);
    expect(listed.body.sources).toContainEqual(expect.objectContaining({ id, kind: 'runner', instanceId: id, title: 'Llama 3.2 1B (simulated): runner log' }));
    expect(listed.body.sources).toContainEqual(expect.objectContaining({ id: `${id}:stdout`, kind: 'runner' }));
    expect((await fetch(`${rig.url}/api/logs`)).status).toBe(401);
  });

  it('answers the last lines as the file holds them', async () => {
    const file = readFileSync(join(rig.core.dataDir, 'logs', id, 'stdout.log'), 'utf8')
      .trimEnd()
      .split('\n');
    const last = await rig.control('GET', `/api/logs/${id}:stdout?lines=2`);
    expect(last.status).toBe(200);
    expect(last.body.lines).toEqual(file.slice(-2));
    expect((await rig.control('GET', '/api/logs/nope')).status).toBe(404);
    expect((await rig.control('GET', `/api/logs/${id}?lines=many`)).status).toBe(400);
  });

  it('follows a runner log live: a line the runner writes arrives while the stream stays open', async () => {
    const abort = new AbortController();
    const response = await fetch(`${rig.url}/api/logs/${id}:stdout?follow=1&lines=0`, {
      headers: { Authorization: `Bearer ${rig.token}` },
      signal: abort.signal,
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const lines = sseData(response);
    const client = new OpenAI({ baseURL: `${rig.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const completion = client.chat.completions.create({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 });
    // The line arrives as an event of the open stream (how soon is the bench's concern).
    const next = await lines.next();
    expect(next.done).toBe(false);
    const first = next.value as { line: string };
    expect(typeof first.line).toBe('string');
    expect(first.line.length).toBeGreaterThan(0);
    await completion;
    abort.abort();
  });
});
