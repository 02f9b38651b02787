/**
 * The official Python clients against `exobar serve` with a real MLX runner: the tiny
 * random-weight `qwen3` model (electron/runners/mlx/tools/tiny_models.py: a byte-level
 * tokenizer and a chat template with tools, whose `<tool_call>` markers mlx-lm's
 * `json_tools` parser reads), found by the model scan in a scratch hub cache and loaded
 * on the first request. The same script as the sim's test (sdk-clients.py, mode `mlx`):
 * random weights call a tool only because tool_choice forces it and write valid JSON
 * only because the grammar makes them (constrained decoding, docs/structured-output.md),
 * so these calls pass only if that machinery works end to end. Each request is then in
 * the request log with its `api`, TTFT and outcome, and in `/metrics` (sdk-serve-run.ts).
 *
 * The MLX interpreter is `$EXOBAR_MLX_PYTHON` (CI sets it); without it the test skips
 * with one loud line, and under CI=true fails. The SDK venv is sdk-venv.ts'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { hubCacheWith, tinyMlxModel } from '../support/tiny-mlx-hub';
import { expectLoggedAndCounted, runSdkClients } from './sdk-serve-run';
import { makeSdkVenv } from './sdk-venv';

const REPO = 'exobar/tiny-qwen3';
const MODEL = `mlx/${REPO}`;
const python = process.env.EXOBAR_MLX_PYTHON;

if (!python && process.env.CI === 'true') {
  describe('the official SDKs against exobar serve (real MLX)', () => {
    it('runs in CI', () => {
      expect.fail('CI must run the real-MLX SDK test: EXOBAR_MLX_PYTHON is not set');
    });
  });
} else if (!python) {
  console.warn('*** SKIPPING the official SDKs against exobar serve on real MLX: EXOBAR_MLX_PYTHON is not set (see electron/runners/mlx/requirements-cpu.txt)');
  describe.skip('the official SDKs against exobar serve (real MLX) — needs EXOBAR_MLX_PYTHON', () => {
    it('skipped', () => {});
  });
} else {
  let serve: ServeProcess;
  let unavailable: string | null = null;
  const root = mkdtempSync(join(tmpdir(), 'exobar-sdk-mlx-'));

  beforeAll(async () => {
    unavailable = await makeSdkVenv();
    if (unavailable) return;
    const hub = hubCacheWith(tinyMlxModel(python, 'qwen3'), root, REPO);
    serve = await startServe({
      simTimeScale: 1,
      settings: { mlxPython: python },
      // Only the tiny model: the scan looks nowhere an operator's models are.
      env: { HF_HUB_CACHE: hub, EXO_HOME: join(root, 'exo') },
    });
  }, 900_000);

  afterAll(async () => {
    await serve?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  describe('the official SDKs against exobar serve (real MLX, tiny qwen3)', () => {
    it('Anthropic (stream, forced tool use and its result), OpenAI (Responses with a tool, chat with tools, parse) and Ollama answer on random weights; each request is logged and counted with its api', async (ctx) => {
      if (unavailable) ctx.skip();
      const said = await runSdkClients(serve, MODEL, 'mlx');
      // Random weights, yet the pydantic model validated (the script checks it): the grammar's bounds hold.
      const parsed = said.find((s) => s.parsed)?.parsed as { name: string; population: number; coastal: boolean };
      expect(parsed.name.length).toBeLessThanOrEqual(12);
      expect(Number.isInteger(parsed.population)).toBe(true);
      expect(typeof parsed.coastal).toBe('boolean');
      expect(said.filter((s) => 'tool' in s).map((s) => s.api)).toEqual(['anthropic-messages', 'openai-responses', 'openai-chat']);
      await expectLoggedAndCounted(serve, MODEL, said);
    }, 900_000);
  });
}
