/**
 * exo's supervisor-stall scenario (docs/domain.md) driven through the local API with the
 * official `openai` client, as any OpenAI client would drive it: the 3B prefills a
 * unique ~30k-token prompt, one more 3B request is queued behind it, and a short 1B
 * request is sent 3.5 s (calibrated) in. The 1B's time to first token is measured at
 * the client; the queued case must stay within 1.2x of the busy case, as it does in
 * the node-level benchmark (bench/stall-scenario.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import pino from 'pino';
import { makePrompt } from '../shared/token-count';
import { startCore, type RunningCore } from '../electron/core/start-core';
import { median } from '../test/support/median';
import { LONG_MODEL, SMALL_MODEL } from './stall-scenario';
import { sleep } from '../test/support/eventually';

/** The same shape as the node-level benchmark's scenario. */
const LONG_PROMPT_TOKENS = 30_000;
const SHORT_REQUEST_AT_S = 3.5;
const QUEUED_REQUEST_AT_S = 1.0;

export const API_STALL_CONDITIONS = ['alone', 'busy', 'queued'] as const;
export type ApiStallCondition = (typeof API_STALL_CONDITIONS)[number];

export interface ApiStallResult {
  time_scale: number;
  /** The 1B's TTFT at the client, calibrated seconds (measured / time scale). */
  ttft: Record<ApiStallCondition, { median_s: number; trials: number[]; node_median_s: number }>;
  /** queued over busy at the client; target <= 1.2 (exo's fix: 0.34-0.42 s vs 0.38-0.40 s). */
  queued_over_busy: number;
}

/** A user prompt of exactly `tokens` sim tokens, in the client's message type. */
function prompt(tokens: number, salt: string): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  return makePrompt(tokens, salt).map((m) => ({ role: 'user', content: m.content }));
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Streams one request with the official client; resolves with the client-side TTFT and the completion id. */
export async function streamWithClient(
  client: OpenAI,
  model: string,
  messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[],
): Promise<{ ttftMs: number; id: string }> {
  const sentAt = performance.now();
  const stream = await client.chat.completions.create({ model, messages, max_tokens: 8, stream: true });
  let ttftMs: number | null = null;
  let id = '';
  for await (const chunk of stream) {
    if (ttftMs == null && chunk.choices[0]?.delta.content) {
      ttftMs = performance.now() - sentAt;
      id = chunk.id;
    }
  }
  if (ttftMs == null) throw new Error(`${model} streamed no token`);
  return { ttftMs, id };
}

async function trial(
  core: RunningCore,
  client: OpenAI,
  condition: ApiStallCondition,
  n: number,
  timeScale: number,
): Promise<{ clientS: number; nodeS: number }> {
  const salt = `api-${condition}-${n}-${Date.now()}`;
  const background: Promise<unknown>[] = [];
  if (condition !== 'alone') background.push(streamWithClient(client, LONG_MODEL, prompt(LONG_PROMPT_TOKENS, salt)));
  if (condition === 'queued') {
    await sleep(QUEUED_REQUEST_AT_S * 1000 * timeScale);
    background.push(streamWithClient(client, LONG_MODEL, prompt(200, `${salt}-queued`)));
  }
  if (condition !== 'alone') await sleep((SHORT_REQUEST_AT_S - (condition === 'busy' ? 0 : QUEUED_REQUEST_AT_S)) * 1000 * timeScale);
  const short = await streamWithClient(client, SMALL_MODEL, prompt(20, `${salt}-short`));
  await Promise.all(background);
  const sample = core.node
    .snapshot()
    .instances.flatMap((i) => i.ttft.samples)
    .find((s) => s.requestId === short.id);
  if (!sample) throw new Error('no TTFT sample for the 1B request');
  return { clientS: short.ttftMs / 1000 / timeScale, nodeS: sample.totalMs / 1000 / timeScale };
}

/** Runs every condition `trials` times, interleaved, on one fresh core with the 1B and the 3B ready. */
export async function measureApiStall(timeScale = 1, trials = 3, progress: (line: string) => void = () => undefined): Promise<ApiStallResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-bench-api-stall-'));
  const core = await startCore({ dataDir, port: 0, simTimeScale: timeScale, rendererDir: null, logger: pino({ level: 'warn' }, pino.destination(2)) });
  const client = new OpenAI({ baseURL: `${core.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  try {
    for (const model of [SMALL_MODEL, LONG_MODEL]) {
      const instance = await core.node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
      await core.node.waitForReady(instance.id, 120_000);
      // Warm up the client, the connection and the runner: the first request of a process is slower.
      await streamWithClient(client, model, prompt(20, `warm-up-${Date.now()}`));
    }
    const client_s = Object.fromEntries(API_STALL_CONDITIONS.map((c) => [c, [] as number[]])) as Record<ApiStallCondition, number[]>;
    const node_s = Object.fromEntries(API_STALL_CONDITIONS.map((c) => [c, [] as number[]])) as Record<ApiStallCondition, number[]>;
    for (let n = 0; n < trials; n++) {
      for (const condition of API_STALL_CONDITIONS) {
        const result = await trial(core, client, condition, n, timeScale);
        client_s[condition].push(round(result.clientS));
        node_s[condition].push(round(result.nodeS));
        progress(`api ${condition} trial ${n + 1}/${trials}: 1B TTFT ${result.clientS.toFixed(3)} s at the client (${result.nodeS.toFixed(3)} s in the node)`);
      }
    }
    const ttft = Object.fromEntries(
      API_STALL_CONDITIONS.map((c) => [c, { median_s: round(median(client_s[c])), trials: client_s[c], node_median_s: round(median(node_s[c])) }]),
    ) as ApiStallResult['ttft'];
    return { time_scale: timeScale, ttft, queued_over_busy: round(ttft.queued.median_s / ttft.busy.median_s) };
  } finally {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
