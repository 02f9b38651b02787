/**
 * The prompt cache with the official `openai` Python client against `exobar serve` running
 * a real MLX runner (mlx-lm's LRUPromptCache, MLX's CPU backend) on the tiny llama
 * (test/support/mlx-serve.ts): the same scenarios as the sim's
 * (openai-python-prompt-cache.test.ts, prompt_cache_client.py), with what real mlx-lm does
 * differently asserted, not skipped:
 * - a chat's turn is served the previous prompt and the model's reply too (the finished
 *   request's cache is kept, as mlx_lm.server does);
 * - mlx-lm serves a prompt the part it shares with a longer entry, so a prompt that shares
 *   nothing but the chat template's opening is served that opening: "a miss" below is a
 *   few tokens, not 0, except for a fresh runner's first prompt;
 * - a prompt sent again after its request finished is served from the longer entry that
 *   holds it and the reply, cut back to all of the prompt but its last two tokens (mlx-lm
 *   keeps one token of the looked-up prefix, which already leaves out the last one).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually';
import { realMlx, startServeWithTinyMlx, type MlxServe } from '../support/mlx-serve';
import { pythonWithOpenAi } from '../support/python-openai-venv';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('prompt_cache_client.py', import.meta.url));
const FAMILY = 'llama';
/** The cancelled prompt: long enough that the tiny llama's CPU prefill takes seconds, in many chunks. */
const LONG_PROMPT_WORDS = 2500;
/** The LRU server's cap, in prompt cache entries of one 100-word prompt: room for two, not three. */
const LRU_CAP_ENTRIES = 2.5;
/** What a prompt sharing only the chat template's opening with every entry is served. */
const OPENING = 10;

interface PromptCacheView {
  supported: boolean;
  reason: string | null;
  entries: number;
  bytes: number;
  capBytes: number;
  hits: number;
  misses: number;
}

async function client(on: MlxServe, scenario: string, extra: string[] = []): Promise<Record<string, unknown>> {
  const { stdout } = await run(python, [CLIENT, `${on.serve.url}/v1`, scenario, on.model, ...extra], { timeout: 900_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
}

async function promptCache(on: MlxServe): Promise<PromptCacheView> {
  const instance = await on.instance();
  const engine = instance.runnerEngine as { promptCache: PromptCacheView | null } | null;
  if (!engine?.promptCache) throw new Error(`no prompt cache in /api/state: ${JSON.stringify(instance.runnerEngine)}`);
  return engine.promptCache;
}

let python: string;
let serve: MlxServe;
let lruServe: MlxServe | undefined;
let refusedServe: MlxServe | undefined;

const ready = realMlx();

if ('missing' in ready) {
  if (process.env.CI === 'true') {
    describe('the prompt cache on real MLX, with the official openai Python client', () => {
      it('runs in CI', () => {
        expect.fail(`CI must run the real-MLX prompt cache tests: ${ready.missing}`);
      });
    });
  } else {
    console.warn(`*** SKIPPING the real-MLX prompt cache tests: ${ready.missing} (see electron/runners/mlx/requirements-cpu.txt)`);
    describe.skip('the prompt cache on real MLX — needs EXOBAR_MLX_PYTHON', () => {
      it('skipped', () => {});
    });
  }
} else {
  beforeAll(async () => {
    python = await pythonWithOpenAi();
    // The default cap: the model's KV cache at the fit check's context length.
    serve = await startServeWithTinyMlx({ python: ready.python, family: FAMILY });
  }, 900_000);

  afterAll(async () => {
    await Promise.all([serve?.stop(), lruServe?.stop(), refusedServe?.stop()]);
  });

  describe('the prompt cache on real MLX, with the official openai Python client', () => {
    it('a cache over its byte cap evicts the least recently used prompt', async () => {
      // What one 100-word prompt's entry weighs here, measured, not computed: a prefill
      // from nothing allocates its cache in steps of many tokens, the finished request's
      // entry (prompt and reply) and a prefill from a cached prefix are near their size.
      // The runner reports its cache after each prefill: on the fresh runner (the warm-up
      // leaves nothing), after a second prompt's prefill it holds the first's finished
      // entry and the second's prefill, each one of the size every later entry has.
      const lookups = (view: PromptCacheView) => view.hits + view.misses;
      const reported = async (after: number) =>
        eventually(
          async () => {
            const view = await promptCache(serve);
            return lookups(view) > after ? view : null;
          },
          60_000,
          'the runner to report its prompt cache',
        );
      expect((await client(serve, 'one', ['w310'])).cached).toBe(0);
      const first = await reported(0);
      await client(serve, 'one', ['w311']);
      const second = await reported(lookups(first));
      expect([first.entries, second.entries], JSON.stringify({ first, second })).toEqual([1, 2]);
      const entry = second.bytes / 2;
      lruServe = await startServeWithTinyMlx({
        python: ready.python,
        family: FAMILY,
        settings: { runner: { promptCacheBytes: Math.round(entry * LRU_CAP_ENTRIES) } },
      });
      const seen = await client(lruServe, 'lru');
      const report = JSON.stringify(seen);
      // A is a fresh runner's first prompt; A, B and C share only the template's opening.
      expect(seen.a, report).toBe(0);
      expect(seen.b, report).toBeLessThan(OPENING);
      expect(seen.a_again, report).toBeGreaterThan(100);
      expect(seen.c, report).toBeLessThan(OPENING);
      // C pushed out B (least recently used), not A (used again just before).
      expect(seen.b_again, report).toBeLessThan(OPENING);
      expect(seen.c_again, report).toBeGreaterThan(100);
      const cache = await promptCache(lruServe);
      expect(cache.entries, JSON.stringify(cache)).toBe(2);
      expect(cache.bytes).toBeLessThanOrEqual(cache.capBytes);
    }, 900_000);

    it('a four-turn chat reports growing cached_tokens, streamed too', async () => {
      const { turns } = (await client(serve, 'four_turns')) as { turns: { prompt: number; cached: number }[] };
      expect(turns).toHaveLength(5);
      // It shares only the template's opening with the prompt before it.
      expect(turns[0]!.cached).toBeLessThan(OPENING);
      for (let i = 1; i < turns.length; i++) {
        // Each turn is served at least the whole previous prompt (and the reply when its
        // text tokenizes back the same), never its own new part.
        expect(turns[i]!.cached, JSON.stringify(turns)).toBeGreaterThanOrEqual(turns[i - 1]!.prompt);
        expect(turns[i]!.cached, JSON.stringify(turns)).toBeLessThan(turns[i]!.prompt);
      }
      const cache = await eventually(
        async () => {
          const view = await promptCache(serve);
          return view.hits >= 4 ? view : null;
        },
        60_000,
        'the runner to report the four hits',
      );
      expect(cache.entries).toBeGreaterThan(0);
      expect(cache.bytes).toBeLessThanOrEqual(cache.capBytes);
    }, 900_000);

    it("a cancelled request's partial prefill is never served to another request", async () => {
      const seen = await client(serve, 'cancelled_prefill', [String(LONG_PROMPT_WORDS)]);
      const report = JSON.stringify(seen);
      expect(seen.finish, report).toBe('cancelled');
      if (seen.cancelledCompletionTokens !== null) expect(seen.cancelledCompletionTokens, report).toBe(0);
      // The same prompt again is served only what it shares with the earlier chat: the
      // chat template's opening, a few tokens, nothing of the cancelled prefill.
      expect(seen.againCached, report).toBeLessThan(OPENING);
      // Once a whole prefill of it was stored, the cache serves all of it but the last tokens,
      expect(seen.thirdCached, report).toBe((seen.prompt as number) - 2);
      // and greedy decoding answers the same from the cache as from a whole prefill.
      expect(seen.thirdText, report).toBe(seen.againText);
    }, 900_000);

    it('a model whose cache family cannot be reused says why in /api/state, and is never served from the cache', async () => {
      // Llama 4's ChunkedKVCache: a prefix cut back from a longer entry gave other tokens.
      refusedServe = await startServeWithTinyMlx({ python: ready.python, family: 'llama4' });
      const cache = await promptCache(refusedServe);
      expect(cache.supported).toBe(false);
      expect(cache.reason).toContain('ChunkedKVCache');
      const seen = await client(refusedServe, 'lru');
      expect(Object.values(seen), JSON.stringify(seen)).toEqual([0, 0, 0, 0, 0, 0]);
    }, 900_000);
  });
}
