/**
 * The official Python clients through exobar to the fake exo: OpenAI's `responses.create`
 * streamed (exo's `/v1/responses`), OpenAI's chat completions with a tool the fake exo
 * calls (exo's chat adapter), Ollama's chat streamed (exo's `/ollama/api/chat`), each
 * recorded with its `api`, TTFT and outcome and counted in `/metrics`. Anthropic's
 * (exo 0.3.70's `/v1/messages`, test/support/fake-exo/worker/messages-route.ts): a streamed message
 * reads as the SDK expects, and is recorded by exo's command id as `anthropic-messages`
 * with its TTFT and outcome (request log row and `/metrics`); a message cancelled by
 * `POST /v1/cancel/msg_…` ends cleanly for the SDK and is recorded cancelled. The
 * clients are the pinned venv's (sdk-venv.ts).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLAMA_3B } from '../support/fake-exo';
import { startProxyRig, type ProxyRig } from '../support/exo-proxy-rig';
import { exoRecord } from '../../electron/core/request-log/request-feed';
import { ExobarMetrics } from '../../electron/core/metrics/exobar-metrics';
import type { ProxiedRequest } from '../../electron/core/exo/proxy/exo-traffic';
import { makeSdkVenv, run, sdkPython } from './sdk-venv';

let p: ProxyRig;
let unavailable: string | null = null;
beforeAll(async () => {
  unavailable = await makeSdkVenv();
  if (!unavailable) p = await startProxyRig({ timeScale: 0.05 });
}, 900_000);
afterAll(async () => {
  await p?.close();
});

/** The record's row has its api, a TTFT and outcome done, and `/metrics` counts it by api. */
async function expectLoggedAndCounted(record: ProxiedRequest | null | undefined, api: string): Promise<void> {
  expect(record).toMatchObject({ phase: 'done', api });
  const row = exoRecord(record!, { instance: null, node: null });
  expect(row).toMatchObject({ api, outcome: 'done' });
  expect(row.ttftMs).toBeGreaterThan(0);
  const metrics = new ExobarMetrics({ snapshot: () => p.rig.core.node.snapshot(), mac: 'mac' });
  metrics.observeRequest(row);
  expect((await metrics.scrape()).text).toMatch(new RegExp(`exobar_requests_total\\{[^}]*api="${api}"[^}]*outcome="done"`));
}

const client = async (mode: string) => {
  const { stdout } = await run(sdkPython, [join(__dirname, 'exo-sdk-clients.py'), p.rig.url, LLAMA_3B, mode], { timeout: 120_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(`exo-sdk-clients.py ${mode} failed:\n${error.stderr ?? ''}\n${error.stdout ?? ''}`);
    },
  );
  return JSON.parse(stdout.trim()) as { id: string; text: string; cancel?: unknown };
};

// Each case starts a Python SDK client: 43-52 s each on a loaded 2-core machine, past the default 60 s.
const SDK_CASE = { timeout: 240_000 };

describe("Anthropic's SDK through exobar to exo", SDK_CASE, () => {
  it('streams a message, recorded as anthropic-messages with its TTFT, outcome and metrics', async (ctx) => {
    if (unavailable) ctx.skip();
    const said = await client('stream');
    const record = p.serving.traffic.find(said.id.slice('msg_'.length))!;
    expect(record).toMatchObject({ phase: 'done', api: 'anthropic-messages', completionTokens: 3 });
    const row = exoRecord(record, { instance: null, node: null });
    expect(row).toMatchObject({ api: 'anthropic-messages', outcome: 'done', model: LLAMA_3B });
    expect(row.ttftMs).toBeGreaterThan(0);
    const metrics = new ExobarMetrics({ snapshot: () => p.rig.core.node.snapshot(), mac: 'mac' });
    metrics.observeRequest(row);
    const { text } = await metrics.scrape();
    expect(text).toMatch(/exobar_requests_total\{[^}]*api="anthropic-messages"[^}]*outcome="done"/);
  });

  it('a message cancelled by POST /v1/cancel/msg_<command id> ends cleanly for the SDK and is recorded cancelled', async (ctx) => {
    if (unavailable) ctx.skip();
    // The prefill stays open until the cancel is answered: it cannot end first.
    const release = p.exo.worker.holdPrefills(LLAMA_3B);
    try {
      const said = await client('cancel');
      expect(said.cancel).toMatchObject({ cancelled: true, held_by_exobar: false, exo: { status: 200 } });
      const row = exoRecord(p.serving.traffic.find(said.id.slice('msg_'.length))!, { instance: null, node: null });
      expect(row).toMatchObject({ api: 'anthropic-messages', outcome: 'cancelled', cancelledBy: 'cancel_api' });
    } finally {
      release();
    }
  });
});

describe("OpenAI's and Ollama's SDKs through exobar to exo", SDK_CASE, () => {
  it('responses.create streamed, recorded as openai-responses with its TTFT, outcome and metrics', async (ctx) => {
    if (unavailable) ctx.skip();
    const said = await client('responses');
    await expectLoggedAndCounted(p.serving.traffic.find(said.id.slice('resp_'.length)), 'openai-responses');
  });

  it("chat completions with a tool: exo's tool call reaches the SDK whole, recorded as openai-chat", async (ctx) => {
    if (unavailable) ctx.skip();
    p.exo.chat.answerWithToolCalls([{ id: 'call-sdk', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    const said = await client('chat-tools');
    await expectLoggedAndCounted(p.serving.traffic.find(said.id), 'openai-chat');
  });

  it('ollama chat streamed, recorded as ollama-chat with its TTFT, outcome and metrics', async (ctx) => {
    if (unavailable) ctx.skip();
    const before = new Set(p.serving.traffic.records());
    await client('ollama-chat');
    await expectLoggedAndCounted(
      p.serving.traffic.records().find((r) => r.api === 'ollama-chat' && !before.has(r)),
      'ollama-chat',
    );
  });
});
