/**
 * What the local API adds on top of the node, measured through real HTTP:
 *
 * - `api_overhead_ms_median`: time to first token at an HTTP client minus the node's
 *   own TTFT for the same request (its TtftSample.totalMs, measured from the request's
 *   arrival at the API to the runner's first token chunk), median over many short
 *   sequential requests. Target: under 5 ms.
 * - `stream_tokens_per_s`: tokens per second delivered over SSE with 8 concurrent
 *   streams per model on two models at once, next to the same load submitted to the
 *   node directly, so a bottleneck in the API would show as a ratio below 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { makePrompt } from '../shared/token-count';
import { startCore, type RunningCore } from '../electron/core/start-core';
import { measureDialectOverhead } from './api-dialect-overhead';

export const OVERHEAD_MODEL = 'sim/llama-3.2-1b';
export const STREAM_MODELS = ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'] as const;

export interface ApiBenchOptions {
  /** Sim time scale (1 = calibrated real time). */
  timeScale?: number;
  /** Sequential requests for the overhead median (after warm-up). */
  overheadRequests?: number;
  streamsPerModel?: number;
  /** Tokens each stream generates. */
  streamTokens?: number;
  progress?: (line: string) => void;
}

export interface ApiBenchResult {
  time_scale: number;
  api_overhead_ms_median: number;
  /** The same median for every API dialect (bench/api-dialect-overhead.ts). */
  api_overhead_ms_median_by_dialect: Record<string, number>;
  api_overhead_ms_p95: number;
  api_overhead_requests: number;
  client_ttft_ms_median: number;
  node_ttft_ms_median: number;
  stream_tokens_per_s: number;
  stream: {
    models: string[];
    streams_per_model: number;
    tokens_per_stream: number;
    seconds: number;
    per_model_tokens_per_s: Record<string, number>;
    /** The same load submitted to the node directly (no HTTP). */
    node_direct_tokens_per_s: number;
    /** API throughput over direct throughput: 1 means the API costs nothing. */
    api_over_node: number;
  };
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Keep-alive connections, as OpenAI clients use them. Node's plain http client: the
 * thinnest HTTP client, so the figure is what the API adds, not what a client library
 * adds (undici's fetch alone adds about 1.5 ms per request on the same machine).
 */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One streamed request over HTTP: the completion id, when its first content arrived, its tokens. */
export function streamOnce(url: string, model: string, content: string, maxTokens: number): Promise<{ id: string; ttftMs: number; tokens: number }> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: maxTokens, stream: true });
  return new Promise((resolve, reject) => {
    const sentAt = performance.now();
    let firstAt: number | null = null;
    let id = '';
    let tokens = 0;
    let buffer = '';
    const req = request(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          res.on('data', (text: string) => (buffer += text));
          res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${buffer}`)));
          return;
        }
        res.on('data', (text: string) => {
          buffer += text;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (!message.startsWith('data: {')) continue;
            const chunk = JSON.parse(message.slice(6)) as { id: string; choices: { delta: { content?: string } }[] };
            // The stream opens with a role chunk (content ""), before the prefill: not a token.
            if (!chunk.choices[0]?.delta.content) continue;
            firstAt ??= performance.now();
            id = chunk.id;
            tokens += 1;
          }
        });
        res.on('end', () => (firstAt == null ? reject(new Error(`no token for ${model}`)) : resolve({ id, ttftMs: firstAt - sentAt, tokens })));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function launch(core: RunningCore, model: string): Promise<void> {
  const instance = await core.node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
  await core.node.waitForReady(instance.id, 120_000);
}

export function nodeTtftMs(core: RunningCore, requestId: string): number {
  const sample = core.node
    .snapshot()
    .instances.flatMap((i) => i.ttft.samples)
    .find((s) => s.requestId === requestId);
  if (!sample) throw new Error(`no TTFT sample in the snapshot for ${requestId}`);
  return sample.totalMs;
}

async function measureOverhead(core: RunningCore, requests: number, progress: (line: string) => void) {
  // Warm-up: JIT, connection pool, the runner's first steps.
  for (let i = 0; i < 5; i++) await streamOnce(core.url, OVERHEAD_MODEL, `warm up ${i}`, 1);
  const overhead: number[] = [];
  const client: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < requests; i++) {
    const result = await streamOnce(core.url, OVERHEAD_MODEL, `overhead probe ${i}`, 1);
    const inside = nodeTtftMs(core, result.id);
    client.push(result.ttftMs);
    node.push(inside);
    overhead.push(result.ttftMs - inside);
  }
  progress(
    `api overhead: median ${quantile(overhead, 0.5).toFixed(2)} ms over ${requests} requests (client TTFT ${quantile(client, 0.5).toFixed(1)} ms, node TTFT ${quantile(node, 0.5).toFixed(1)} ms)`,
  );
  return { overhead, client, node };
}

/** Runs `streams` per model at once through the API; tokens/s over the wall time of the whole batch. */
async function measureApiStreams(core: RunningCore, streamsPerModel: number, tokens: number) {
  const started = performance.now();
  const perModel: Record<string, number> = {};
  const perModelEnd: Record<string, number> = {};
  await Promise.all(
    STREAM_MODELS.flatMap((model) =>
      Array.from({ length: streamsPerModel }, async (_, i) => {
        const result = await streamOnce(core.url, model, `stream ${i} of ${model}`, tokens);
        perModel[model] = (perModel[model] ?? 0) + result.tokens;
        perModelEnd[model] = Math.max(perModelEnd[model] ?? 0, performance.now());
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const total = Object.values(perModel).reduce((a, b) => a + b, 0);
  const perModelRate = Object.fromEntries(STREAM_MODELS.map((m) => [m, round((perModel[m] ?? 0) / ((perModelEnd[m]! - started) / 1000), 1)]));
  return { seconds, total, perModelRate };
}

/** The same load submitted to the node directly: what the runners can deliver without HTTP. */
async function measureDirectStreams(core: RunningCore, streamsPerModel: number, tokens: number) {
  const started = performance.now();
  let total = 0;
  await Promise.all(
    STREAM_MODELS.flatMap((model) =>
      Array.from({ length: streamsPerModel }, async (_, i) => {
        const handle = core.node.submit({ model, messages: makePrompt(8, `direct ${i}`), maxTokens: tokens }, (event) => {
          if (event.type === 'token') total += 1;
        });
        const end = await handle.done;
        if (end.type !== 'finished') throw new Error(`direct stream ended ${end.type}`);
      }),
    ),
  );
  return { seconds: (performance.now() - started) / 1000, total };
}

/**
 * Measures the API's added latency and its streaming throughput on a fresh core
 * (temporary data directory, port 0, sim runners), then stops it.
 */
export async function measureApiOverhead(options: ApiBenchOptions = {}): Promise<ApiBenchResult> {
  const timeScale = options.timeScale ?? 1;
  const requests = options.overheadRequests ?? 60;
  const streamsPerModel = options.streamsPerModel ?? 8;
  const streamTokens = options.streamTokens ?? 256;
  const progress = options.progress ?? (() => undefined);
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-bench-api-'));
  const core = await startCore({ dataDir, port: 0, simTimeScale: timeScale, rendererDir: null, logger: pino({ level: 'warn' }, pino.destination(2)) });
  try {
    for (const model of STREAM_MODELS) await launch(core, model);
    const { overhead, client, node } = await measureOverhead(core, requests, progress);
    const byDialect = await measureDialectOverhead(core, Math.max(5, Math.round(requests / 3)), { model: OVERHEAD_MODEL, nodeTtftMs, quantile }, progress);
    // Warm both runners' batched decode before timing throughput.
    await measureDirectStreams(core, streamsPerModel, 16);
    const direct = await measureDirectStreams(core, streamsPerModel, streamTokens);
    const api = await measureApiStreams(core, streamsPerModel, streamTokens);
    const apiRate = api.total / api.seconds;
    const directRate = direct.total / direct.seconds;
    progress(
      `streams: ${streamsPerModel} per model on ${STREAM_MODELS.length} models: ${apiRate.toFixed(0)} tokens/s through the API, ${directRate.toFixed(0)} tokens/s direct`,
    );
    return {
      time_scale: timeScale,
      api_overhead_ms_median: round(quantile(overhead, 0.5)),
      api_overhead_ms_median_by_dialect: byDialect,
      api_overhead_ms_p95: round(quantile(overhead, 0.95)),
      api_overhead_requests: requests,
      client_ttft_ms_median: round(quantile(client, 0.5)),
      node_ttft_ms_median: round(quantile(node, 0.5)),
      stream_tokens_per_s: round(apiRate, 1),
      stream: {
        models: [...STREAM_MODELS],
        streams_per_model: streamsPerModel,
        tokens_per_stream: streamTokens,
        seconds: round(api.seconds),
        per_model_tokens_per_s: api.perModelRate,
        node_direct_tokens_per_s: round(directRate, 1),
        api_over_node: round(apiRate / directRate),
      },
    };
  } finally {
    await core.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
