/**
 * The prompt cache with the official `openai` Python client against `exobar serve` and
 * sim models (prompt_cache_client.py drives it; a venv with `openai` is made once,
 * test/support/python-openai-venv.ts): a four-turn chat reports growing
 * `usage.prompt_tokens_details.cached_tokens`; a cache over its byte cap evicts the least
 * recently used prompt; a cancelled request's partial prefill is never served to another.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSimModel, kvBytesPerToken } from '../../shared/catalog';
import { pythonWithOpenAi } from '../support/python-openai-venv';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('prompt_cache_client.py', import.meta.url));
const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';
/** The cap of the first server: room for two of the LRU scenario's 107-token prompts, not three (the chat's turns fit too). */
const LRU_CAP_TOKENS = 250;

let python: string;
let serve: ServeProcess;
/** A second server with the default cap (the KV cache at 8192 tokens) and calibrated time, for the cancel scenario. */
let defaults: ServeProcess | undefined;

async function client(scenario: string, model: string, on: ServeProcess = serve): Promise<Record<string, unknown>> {
  const { stdout } = await run(python, [CLIENT, `${on.url}/v1`, scenario, model], { timeout: 300_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

beforeAll(async () => {
  python = await pythonWithOpenAi();
  const dataDir = await mkdtemp(join(tmpdir(), 'exobar-prompt-cache-'));
  // One cap for every runner of this server: the LRU scenario's (the others fit in it too).
  const capBytes = LRU_CAP_TOKENS * kvBytesPerToken(findSimModel(SMALL)!.kvCache!);
  await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ runner: { promptCacheBytes: capBytes } }));
  serve = await startServe({ simTimeScale: 0.2, dataDir });
}, 900_000);

afterAll(async () => {
  await Promise.all([serve?.stop(), defaults?.stop()]);
});

describe('the prompt cache, with the official openai Python client', () => {
  it('a four-turn chat reports growing cached_tokens, streamed too', async () => {
    const { turns } = (await client('four_turns', SMALL)) as { turns: { prompt: number; cached: number }[] };
    expect(turns).toHaveLength(5);
    expect(turns[0]!.cached).toBe(0);
    for (let i = 1; i < turns.length; i++) {
      // Each turn is served the whole previous prompt, never its own new part.
      expect(turns[i]!.cached).toBe(turns[i - 1]!.prompt);
      expect(turns[i]!.cached).toBeLessThan(turns[i]!.prompt);
    }
  }, 120_000);

  it('a cache over its byte cap evicts the least recently used prompt', async () => {
    const seen = await client('lru', SMALL);
    expect(seen.a).toBe(0);
    expect(seen.b).toBe(0);
    expect(seen.a_again).toBeGreaterThan(0);
    expect(seen.c).toBe(0);
    // C pushed out B (least recently used), not A (used again just before).
    expect(seen.b_again).toBe(0);
    expect(seen.c_again).toBeGreaterThan(0);
  }, 120_000);

  it("a cancelled request's partial prefill is never served to another request", async () => {
    // The 3B at calibrated time prefills 8,000 tokens in about 5 s: the cancel, sent at the
    // stream's first chunk, lands inside that prefill.
    defaults = await startServe({ simTimeScale: 1 });
    const seen = await client('cancelled_prefill', MEDIUM, defaults);
    expect(seen.finish).toBe('cancelled');
    // Cancelled before its first token: inside its prefill.
    if (seen.cancelledCompletionTokens !== null) expect(seen.cancelledCompletionTokens).toBe(0);
    expect(seen.againCached).toBe(0);
    // The cache does serve this prompt once a whole prefill of it was stored.
    expect(seen.thirdCached).toBe((seen.prompt as number) - 1);
  }, 300_000);
});
