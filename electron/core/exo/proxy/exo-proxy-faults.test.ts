/**
 * exo misbehaving behind the proxy: 404 for a model without an instance, a 500, a
 * stream that ends without [DONE], a hung stream, a dropped connection, the node going
 * away mid-stream. Each time the openai client gets a clear OpenAI-shaped error, the
 * record says why, and exobar keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError } from 'openai';
import { makePrompt } from '../../../../shared/token-count';
import { LLAMA_1B, LLAMA_3B } from '../../../../test/support/fake-exo';
import { exoStallWarnings } from '../stall/exo-stall-warnings';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { eventually } from '../../../../test/support/eventually';

let p: ProxyRig;
beforeAll(async () => {
  p = await startProxyRig({ timeScale: 0.05, idleTimeoutMs: 1_500 });
});
afterAll(async () => {
  await p?.close();
});

const prompt = (tokens: number, salt: string) => [{ role: 'user' as const, content: makePrompt(tokens, salt)[0]!.content }];

/** Streams a request and returns the error the openai client raised (or null). */
async function streamError(model: string, tokens = 40): Promise<APIError | null> {
  try {
    const stream = await p.openai.chat.completions.create({ model, messages: prompt(tokens, `f${Math.random()}`), max_tokens: 4, stream: true });
    for await (const chunk of stream) void chunk;
    return null;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
}

const lastRecord = () => p.serving.traffic.records().at(-1)!;

/** exobar still serves: a normal request through it completes. */
async function stillServes(): Promise<void> {
  const completion = await p.openai.chat.completions.create({ model: LLAMA_1B, messages: [{ role: 'user', content: 'ok?' }], max_tokens: 2 });
  expect(completion.choices[0]!.message.content).toBe('tok0 tok1 ');
}

describe('exo faults behind the proxy', () => {
  it("passes exo's 500 on with its shape and records it", async () => {
    p.exo.inject('status500', { path: '/v1/chat/completions', times: 1 });
    const error = await streamError(LLAMA_1B);
    expect(error?.status).toBe(500);
    expect(lastRecord()).toMatchObject({ phase: 'failed', reason: 'exo answered 500: Internal Server Error' });
    await stillServes();
  });

  it('turns a stream that ends without [DONE] into an error for the client', async () => {
    p.exo.chat.injectStreamFault('truncate');
    const error = await streamError(LLAMA_1B);
    expect(error?.message).toContain('ended without [DONE]');
    expect(lastRecord()).toMatchObject({ phase: 'failed', reason: expect.stringContaining('ended without [DONE]') });
    await stillServes();
  });

  it('ends a hung stream with a timeout error, cancels it at exo, and exo_runner_silent is raised meanwhile', async () => {
    p.exo.chat.injectStreamFault('hang');
    const pending = streamError(LLAMA_1B);
    await eventually(() => p.serving.traffic.active().some((r) => r.phase === 'generating'), 5000, 'the first token');
    const silent = await eventually(
      () =>
        exoStallWarnings({ traffic: p.serving.traffic, reading: p.client.reading, holdEnabled: true, thresholds: { silentFloorMs: 300 } }).find(
          (w) => w.code === 'exo_runner_silent',
        ),
      5000,
      'exo_runner_silent',
    );
    expect(silent.title).toContain(LLAMA_1B);
    const error = await pending;
    expect(error?.message).toContain('hung');
    expect(lastRecord()).toMatchObject({ phase: 'failed', reason: expect.stringContaining('hung') });
    await eventually(() => p.exo.worker.openCommands().length === 0, 5000, 'exo to drop the hung command');
    await stillServes();
  });

  it('reports a connection exo dropped mid-stream', async () => {
    p.exo.chat.injectStreamFault('drop');
    const error = await streamError(LLAMA_1B);
    expect(error?.message).toContain('closed the connection mid-stream');
    expect(lastRecord().reason).toContain('closed the connection mid-stream');
    await stillServes();
  });

  it('reports the node going away mid-stream, then an unreachable node, and serves again when it is back', async () => {
    const pending = streamError(LLAMA_3B, 30_000);
    await eventually(() => p.serving.traffic.active().some((r) => r.phase === 'prefilling'), 5000, 'the prefill');
    await p.exo.refuse();
    const error = await pending;
    expect(error?.message).toContain('closed the connection mid-stream');
    const unreachable = await streamError(LLAMA_1B);
    expect(unreachable?.status).toBe(502);
    expect(unreachable?.code).toBe('exo_unreachable');
    expect(lastRecord().reason).toContain('could not be reached');
    await p.exo.accept();
    await stillServes();
  });

  it("passes exo's 404 on for a model whose instance is gone", async () => {
    await p.client.stop();
    const [instance] = p.exo.cluster.instancesOf(LLAMA_3B);
    p.exo.cluster.deleteInstance(instance!.id);
    const error = await streamError(LLAMA_3B);
    expect(error?.status).toBe(404);
    expect(error?.message).toContain(`No instance found for model ${LLAMA_3B}`);
    expect(lastRecord()).toMatchObject({ phase: 'failed', reason: `exo answered 404: No instance found for model ${LLAMA_3B}` });
    await stillServes();
  });
});
