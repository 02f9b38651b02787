/**
 * `api_overhead_ms_median` per API dialect: the same measurement as bench/api-overhead.ts
 * (time to first content at an HTTP client minus the node's own TTFT for the request)
 * for every dialect exobar serves, each through its own wire format, so a dialect whose
 * adapter costs more than the others shows. The request id comes from `x-request-id`,
 * which every dialect's answer carries.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RunningCore } from '../electron/core/start-core';

/** What bench/api-overhead.ts measures with, handed in (it imports this file). */
export interface OverheadTools {
  model: string;
  nodeTtftMs(core: RunningCore, requestId: string): number;
  quantile(values: readonly number[], q: number): number;
}

interface DialectProbe {
  api: string;
  path: string;
  body(model: string, content: string): unknown;
  /** True for a streamed message (an SSE `data:` payload or an NDJSON line) that carries generated text. */
  isContent(message: Record<string, unknown>): boolean;
}

type Json = Record<string, unknown>;
const first = (v: unknown): Json => ((Array.isArray(v) ? v[0] : undefined) ?? {}) as Json;

/** Every dialect, streaming one token. */
export const DIALECT_PROBES: readonly DialectProbe[] = [
  {
    api: 'openai-chat',
    path: '/v1/chat/completions',
    body: (model, content) => ({ model, messages: [{ role: 'user', content }], max_tokens: 1, stream: true }),
    isContent: (m) => Boolean((first(m.choices).delta as Json | undefined)?.content),
  },
  {
    api: 'openai-completions',
    path: '/v1/completions',
    body: (model, content) => ({ model, prompt: content, max_tokens: 1, stream: true }),
    isContent: (m) => Boolean(first(m.choices).text),
  },
  {
    api: 'openai-responses',
    path: '/v1/responses',
    body: (model, content) => ({ model, input: content, max_output_tokens: 1, stream: true }),
    isContent: (m) => m.type === 'response.output_text.delta',
  },
  {
    api: 'anthropic-messages',
    path: '/v1/messages',
    body: (model, content) => ({ model, messages: [{ role: 'user', content }], max_tokens: 1, stream: true }),
    isContent: (m) => m.type === 'content_block_delta',
  },
  {
    api: 'ollama-chat',
    path: '/api/chat',
    body: (model, content) => ({ model, messages: [{ role: 'user', content }], options: { num_predict: 1 } }),
    isContent: (m) => Boolean((m.message as Json | undefined)?.content),
  },
  {
    api: 'ollama-generate',
    path: '/api/generate',
    body: (model, content) => ({ model, prompt: content, options: { num_predict: 1 } }),
    isContent: (m) => Boolean(m.response),
  },
];

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

/** One streamed request in `probe`'s dialect: its request id and when its first content arrived. */
function probeOnce(url: string, model: string, probe: DialectProbe, content: string): Promise<{ id: string; ttftMs: number }> {
  const body = JSON.stringify(probe.body(model, content));
  return new Promise((resolve, reject) => {
    const sentAt = performance.now();
    let firstAt: number | null = null;
    let buffer = '';
    const req = request(`${url}${probe.path}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      res.setEncoding('utf8');
      const id = String(res.headers['x-request-id'] ?? '');
      if (res.statusCode !== 200) {
        res.on('data', (text: string) => (buffer += text));
        res.on('end', () => reject(new Error(`${probe.api}: HTTP ${res.statusCode}: ${buffer}`)));
        return;
      }
      res.on('data', (text: string) => {
        buffer += text;
        let end: number;
        // SSE messages end with a blank line, NDJSON lines with a newline: split on lines.
        while ((end = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          const json = line.startsWith('data: {') ? line.slice(6) : line.startsWith('{') ? line : null;
          if (json === null || firstAt !== null) continue;
          if (probe.isContent(JSON.parse(json) as Json)) firstAt = performance.now();
        }
      });
      res.on('end', () => (firstAt === null ? reject(new Error(`${probe.api}: no content`)) : resolve({ id, ttftMs: firstAt - sentAt })));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The median API overhead of each dialect over `requests` sequential requests (after a warm-up), interleaved so load drifts hit all alike. */
export async function measureDialectOverhead(
  core: RunningCore,
  requests: number,
  tools: OverheadTools,
  progress: (line: string) => void = () => undefined,
): Promise<Record<string, number>> {
  const { model, nodeTtftMs, quantile } = tools;
  for (const probe of DIALECT_PROBES) for (let i = 0; i < 2; i++) await probeOnce(core.url, model, probe, `warm up ${i}`);
  const overhead = new Map<string, number[]>(DIALECT_PROBES.map((p) => [p.api, []]));
  for (let i = 0; i < requests; i++) {
    for (const probe of DIALECT_PROBES) {
      const result = await probeOnce(core.url, model, probe, `overhead probe ${i}`);
      overhead.get(probe.api)!.push(result.ttftMs - nodeTtftMs(core, result.id));
    }
  }
  const medians = Object.fromEntries([...overhead].map(([api, values]) => [api, Math.round(quantile(values, 0.5) * 1000) / 1000]));
  progress(`api overhead by dialect (median ms over ${requests}): ${Object.entries(medians).map(([api, ms]) => `${api} ${ms.toFixed(2)}`).join(', ')}`);
  return medians;
}
