/**
 * Stop sequences on a real MLX runner through `exobar serve`, in the OpenAI and the
 * Anthropic dialects, whole and streamed. The tiny random-weight llama (its tokenizer
 * knows `w0`...`w989`, so the prompt is distinct `wN` words) answers greedily without a
 * stop; a word from the middle of that answer is then the stop sequence, and the answer
 * must be the text before its first occurrence, ended with `finish_reason: "stop"` /
 * `stop_reason: "stop_sequence"` naming it. Random weights never stop there by chance
 * at the same place in four dialect forms, so this passes only if the runner cuts.
 * And the request log counts a prompt as usage does (the runner's tokenizer), seen with
 * the tiny qwen3, whose byte-level tokenizer counts more than the node's lower bound.
 *
 * The MLX interpreter is `$EXOBAR_MLX_PYTHON` (CI sets it); without it the test skips
 * with one loud line, and under CI=true fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { eventually } from '../support/eventually';
import type { RequestRecord } from '../../shared/request-record';
import { countPromptTokens } from '../../shared/token-count';
import { hubCacheWith, tinyMlxModel } from '../support/tiny-mlx-hub';

const REPO = 'exobar/tiny-llama';
const MODEL = `mlx/${REPO}`;
const QWEN_REPO = 'exobar/tiny-qwen3';
const QWEN = `mlx/${QWEN_REPO}`;
const PROMPT = Array.from({ length: 12 }, (_, i) => `w${i + 40}`).join(' ');
const MAX_TOKENS = 24;
const python = process.env.EXOBAR_MLX_PYTHON;

/** The JSON objects of an SSE body's `data:` lines. */
function events(body: string): Record<string, unknown>[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

if (!python && process.env.CI === 'true') {
  describe('stop sequences on real MLX', () => {
    it('runs in CI', () => {
      expect.fail('CI must run the real-MLX stop sequence test: EXOBAR_MLX_PYTHON is not set');
    });
  });
} else if (!python) {
  console.warn('*** SKIPPING stop sequences on real MLX: EXOBAR_MLX_PYTHON is not set (see electron/runners/mlx/requirements-cpu.txt)');
  describe.skip('stop sequences on real MLX — needs EXOBAR_MLX_PYTHON', () => {
    it('skipped', () => {});
  });
} else {
  let serve: ServeProcess;
  const root = mkdtempSync(join(tmpdir(), 'exobar-mlx-stop-'));

  beforeAll(async () => {
    const hub = hubCacheWith(tinyMlxModel(python, 'llama'), root, REPO);
    hubCacheWith(tinyMlxModel(python, 'qwen3'), root, QWEN_REPO);
    serve = await startServe({
      simTimeScale: 1,
      settings: { mlxPython: python },
      env: { HF_HUB_CACHE: hub, EXO_HOME: join(root, 'exo') },
    });
    // The model scan runs after the server is up: wait for it to find the tiny model.
    let listed = '';
    await eventually(
      async () => {
        listed = await (await fetch(`${serve.url}/api/models`, { headers: { authorization: `Bearer ${serve.token}` } })).text();
        return (listed.includes(`"${MODEL}"`) && listed.includes(`"${QWEN}"`)) || null;
      },
      120_000,
      `the scan to find ${MODEL} and ${QWEN}`,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; /api/models: ${listed.slice(0, 2000)}`);
    });
  }, 900_000);

  afterAll(async () => {
    await serve?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  async function post(path: string, body: object): Promise<Response> {
    const res = await fetch(`${serve.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${serve.token}` },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return res;
  }

  const chat = (extra: object) => ({ model: MODEL, messages: [{ role: 'user', content: PROMPT }], max_tokens: MAX_TOKENS, temperature: 0, ...extra });

  describe('stop sequences on real MLX (tiny llama)', () => {
    it('the answer is the text before the stop word, ended by it and naming it: OpenAI and Anthropic, whole and streamed', async () => {
      const free = (await (await post('/v1/chat/completions', chat({}))).json()) as {
        id: string;
        choices: { message: { content: string } }[];
        usage: { prompt_tokens: number };
      };
      const full = free.choices[0]!.message.content;
      const words = full.split(/\s+/).filter(Boolean);
      expect(words.length, full).toBeGreaterThan(3);
      const stop = words[Math.floor(words.length / 2)]!;
      const expected = full.slice(0, full.indexOf(stop));

      const whole = (await (await post('/v1/chat/completions', chat({ stop: [stop] }))).json()) as {
        choices: { message: { content: string }; finish_reason: string }[];
      };
      expect(whole.choices[0]!.message.content).toBe(expected);
      expect(whole.choices[0]!.finish_reason).toBe('stop');

      const streamed = events(await (await post('/v1/chat/completions', chat({ stop, stream: true }))).text()) as {
        choices: { delta: { content?: string }; finish_reason: string | null }[];
      }[];
      expect(streamed.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expected);
      expect(streamed.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('stop');

      const message = (await (await post('/v1/messages', chat({ stop_sequences: ['never w1 here', stop] }))).json()) as {
        content: { type: string; text: string }[];
        stop_reason: string;
        stop_sequence: string | null;
      };
      expect(message.content.map((b) => b.text).join('')).toBe(expected);
      expect([message.stop_reason, message.stop_sequence]).toEqual(['stop_sequence', stop]);

      const messageEvents = events(await (await post('/v1/messages', chat({ stop_sequences: [stop], stream: true }))).text()) as {
        type: string;
        delta?: { text?: string; stop_reason?: string; stop_sequence?: string | null };
      }[];
      const text = messageEvents.filter((e) => e.type === 'content_block_delta').map((e) => e.delta!.text ?? '').join('');
      expect(text).toBe(expected);
      const end = messageEvents.find((e) => e.type === 'message_delta')!.delta!;
      expect([end.stop_reason, end.stop_sequence]).toEqual(['stop_sequence', stop]);

    }, 900_000);

    it("logs the prompt's size as usage counts it, the runner's tokenizer, not the node's lower bound", async () => {
      // qwen3's byte-level tokenizer splits "hello, world" where the node counts two words.
      const messages = [{ role: 'user' as const, content: 'hello, world' }];
      const answer = (await (await post('/v1/chat/completions', { model: QWEN, messages, max_tokens: 2 })).json()) as {
        id: string;
        usage: { prompt_tokens: number };
      };
      expect(answer.usage.prompt_tokens).toBeGreaterThan(countPromptTokens(messages));
      const record = await eventually(async () => {
        const res = await fetch(`${serve.url}/api/requests?limit=100`, { headers: { authorization: `Bearer ${serve.token}` } });
        return ((await res.json()) as { requests: RequestRecord[] }).requests.find((r) => r.id === answer.id) ?? null;
      });
      expect(record.promptTokens).toBe(answer.usage.prompt_tokens);
    }, 900_000);
  });
}
