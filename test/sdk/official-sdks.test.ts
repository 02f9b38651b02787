/**
 * The official Python clients (Anthropic's, OpenAI's, Ollama's) against `exobar serve`
 * with sim models: every dialect answers as its SDK expects (test/sdk/sdk-clients.py),
 * and every request shows in the request log with its `api`, TTFT and outcome, and in
 * `/metrics` with its `api` label (sdk-serve-run.ts). The same calls on real MLX:
 * official-sdks-mlx.test.ts.
 *
 * The clients are the pinned venv's (sdk-venv.ts): where pip cannot reach PyPI the test
 * says so and skips, except under CI=true, where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { expectLoggedAndCounted, runSdkClients } from './sdk-serve-run';
import { makeSdkVenv } from './sdk-venv';

const MODEL = 'sim/llama-3.2-1b';

let serve: ServeProcess;
let unavailable: string | null = null;

beforeAll(async () => {
  unavailable = await makeSdkVenv();
  if (!unavailable) serve = await startServe({ simTimeScale: 0.05 });
}, 900_000);

afterAll(async () => {
  await serve?.stop();
});

describe('the official SDKs against exobar serve (sim)', () => {
  it('Anthropic, OpenAI (Responses, chat with tools, parse) and Ollama answer as their SDKs expect; each request is logged and counted with its api', async (ctx) => {
    if (unavailable) ctx.skip();
    const said = await runSdkClients(serve, MODEL, 'sim');
    // The sim's schema-valid answer is its own, deterministic one (an integer's minimum).
    expect(said.find((s) => s.parsed)?.parsed).toEqual({ name: 'sim', population: 0, coastal: true });
    await expectLoggedAndCounted(serve, MODEL, said);
  }, 300_000);
});
