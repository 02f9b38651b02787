/**
 * The fake exo serves chat completions the way exo does, over real HTTP: the stream's
 * wire format, tasks in /state/tasks, cancel only on the opening node, 404 for a model
 * without an instance, the error variant, and exo's blocking worker reproducing the
 * measured stall (a short 1B request waits for a 3B prefill) next to the fixed one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { startFakeExo, type FakeExo } from '../fake-exo-server';
import { LLAMA_1B, LLAMA_3B } from '../scenarios';
import { fakeChatRoutes } from './chat-routes';
import { firstTokenMs, readTimedLines } from './sse-lines';
import { startServingExo, type ServingExo } from './serving-exo';
import { sleep } from '../../eventually';

let exo: ServingExo | null = null;
let second: FakeExo | null = null;
afterEach(async () => {
  await second?.close();
  await exo?.close();
  exo = second = null;
});

const post = (base: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

const chat = (base: string, model: string, tokens: number, extra: Record<string, unknown> = {}) =>
  post(base, '/v1/chat/completions', { model, messages: makePrompt(tokens, `p${Math.random()}`), stream: true, max_tokens: 4, ...extra });

describe('fake exo chat completions', () => {
  it('streams exo wire format: keep-alive, a progress comment per 4096-token chunk, command-id chunks, usage, generation_stats, [DONE]', async () => {
    exo = await startServingExo({ timeScale: 0.05 });
    const lines = (await readTimedLines(await chat(exo.url, LLAMA_3B, 9000))).map((l) => l.line);
    expect(lines[0]).toBe(': keep-alive');
    const progress = lines
      .filter((l) => l.startsWith(': prefill_progress '))
      .map((l) => JSON.parse(l.slice(': prefill_progress '.length)).PrefillProgressChunk);
    // As real exo reports it (mlx-lm's generate_step): one token less than the prompt, each chunk
    // leaving one token over, the last line with the first token.
    expect(progress.map((p) => p.processed_tokens)).toEqual([0, 4096, 8192, 8998, 8999]);
    expect(progress[0]).toMatchObject({ model: LLAMA_3B, total_tokens: 8999 });
    const data = lines.filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    expect(data).toHaveLength(4);
    expect(new Set(data.map((d) => d.id)).size).toBe(1);
    expect(data[0]).toMatchObject({ object: 'chat.completion', model: LLAMA_3B, choices: [{ index: 0, delta: { role: 'assistant' } }] });
    expect(data[3].choices[0].finish_reason).toBe('length');
    expect(data[3].usage).toMatchObject({ prompt_tokens: 9000, completion_tokens: 4, total_tokens: 9004 });
    const stats = lines.find((l) => l.startsWith(': generation_stats '))!;
    expect(JSON.parse(stats.slice(': generation_stats '.length))).toMatchObject({ prompt_tokens: 9000, generation_tokens: 4, prefix_cache_hit: 'none' });
    expect(lines.at(-1)).toBe('data: [DONE]');
  });

  it('answers a whole completion with the command id, and 404 in exo shape for a model without an instance', async () => {
    exo = await startServingExo({ timeScale: 0.05 });
    const whole = await post(exo.url, '/v1/chat/completions', { model: LLAMA_1B, messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
    const body = await whole.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'tok0 tok1 tok2 ' }, finish_reason: 'length' }],
      usage: { completion_tokens: 3 },
    });
    const missing = await post(exo.url, '/v1/chat/completions', { model: 'mlx-community/Nope', messages: [{ role: 'user', content: 'hi' }] });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { message: 'No instance found for model mlx-community/Nope', type: 'Not Found', param: null, code: 404 } });
  });

  it('shows the task Running then Pending behind it in /state/tasks and deletes both when their streams end', async () => {
    exo = await startServingExo({ timeScale: 0.1 });
    const a = chat(exo.url, LLAMA_3B, 12_000);
    await sleep(30);
    const b = chat(exo.url, LLAMA_3B, 100);
    await sleep(60);
    const tasks = Object.values((await (await fetch(`${exo.url}/state/tasks`)).json()) as Record<string, Record<string, { taskStatus: string }>>)
      .filter((t) => 'TextGeneration' in t)
      .map((t) => t.TextGeneration!.taskStatus);
    expect(tasks.sort()).toEqual(['Pending', 'Running']);
    await Promise.all([a.then(readTimedLines), b.then(readTimedLines)]);
    const left = Object.values((await (await fetch(`${exo.url}/state/tasks`)).json()) as Record<string, unknown>).filter(
      (t) => 'TextGeneration' in (t as object),
    );
    expect(left).toEqual([]);
  });

  it('cancels only on the node whose API opened the stream', async () => {
    exo = await startServingExo({ timeScale: 0.1 });
    const otherNode = exo.cluster.addNode({ name: 'mini-b' });
    second = await startFakeExo({ cluster: exo.cluster, handlers: [fakeChatRoutes(exo.worker, () => otherNode).handler] });
    const response = await chat(exo.url, LLAMA_3B, 20_000);
    await sleep(50);
    const [open] = exo.worker.openCommands();
    const elsewhere = await post(second.url, `/v1/cancel/${open!.commandId}`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ error: { message: 'Command not found or already completed', code: 404 } });
    const here = await post(exo.url, `/v1/cancel/${open!.commandId}`);
    expect(await here.json()).toEqual({ message: 'Command cancelled.', command_id: open!.commandId });
    // As real exo: the cancelled stream just closes, with no [DONE] (and no token here, mid-prefill).
    const lines = (await readTimedLines(response)).map((l) => l.line);
    expect(lines.some((l) => l.startsWith('data:'))).toBe(false);
    expect(lines.at(-1)).toMatch(/^: prefill_progress /);
  });

  it('sends the error variant when the runner dies mid-request', async () => {
    exo = await startServingExo({ timeScale: 0.1 });
    const response = await chat(exo.url, LLAMA_3B, 20_000);
    await sleep(50);
    exo.worker.failRunner(LLAMA_3B, 'studio-a');
    const lines = (await readTimedLines(response)).map((l) => l.line);
    expect(lines.slice(-2)).toEqual([
      'data: {"error":{"message":"Runner shutdown before completing command (signal=6 (Abort trap: 6))","type":"InternalServerError","code":500}}',
      'data: [DONE]',
    ]);
  });
});

/** The measured scenario at a tenth of real time: 3B prefills ~30k tokens, one more 3B queued, a short 1B request. */
async function stallScenario(mode: 'blocking' | 'fixed'): Promise<number> {
  exo = await startServingExo({ mode, timeScale: 0.1 });
  const long = chat(exo.url, LLAMA_3B, 30_000).then(readTimedLines);
  await sleep(20);
  const queued = chat(exo.url, LLAMA_3B, 50).then(readTimedLines);
  await sleep(350);
  const start = performance.now();
  const short = await readTimedLines(await chat(exo.url, LLAMA_1B, 30));
  await Promise.all([long, queued]);
  return firstTokenMs(short, start)!;
}

describe("exo's blocking worker", () => {
  it('stalls a short 1B request behind the 3B prefill while a second 3B request awaits its ack', async () => {
    const ttft = await stallScenario('blocking');
    // 3B prefill ≈ 1.9 s at this scale, the 1B arrives 0.37 s in: it waits ~1.5 s.
    expect(ttft).toBeGreaterThan(1_000);
  });

  it('does not stall it once fixed (exo PR 2348)', async () => {
    const ttft = await stallScenario('fixed');
    expect(ttft).toBeLessThan(300);
  });
});
