/**
 * A request exobar cancels ends as a cancel for its client, whichever of exo's two
 * answers arrives first: real exo closes the cancelled stream (no finish reason, no
 * [DONE]) before it answers POST /v1/cancel/{id}. Here a proxy between exobar and the
 * fake exo holds every cancel answer for 300 ms, so the stream's end always wins the
 * race; without the hold the answer may come first. Either way the client reads a last
 * chunk with finish_reason "cancelled", then [DONE], and no error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { makePrompt } from '../../../../shared/token-count';
import { startHeldAnswerProxy, type HeldAnswerProxy, LLAMA_1B, readTimedLines } from '../../../../test/support/fake-exo';
import { startProxyRig, type ProxyRig } from '../../../../test/support/exo-proxy-rig';
import { eventually } from '../../../../test/support/eventually';

const HOLD_MS = 300;
const TRIES = 20;

let p: ProxyRig;
let held: HeldAnswerProxy | null = null;
beforeAll(async () => {
  p = await startProxyRig({
    timeScale: 0.5,
    between: async (exoUrl) => (held = await startHeldAnswerProxy(exoUrl, (method, path) => method === 'POST' && path.startsWith('/v1/cancel/'), HOLD_MS)),
  });
});
afterAll(async () => {
  await p?.close();
});

interface Outcome {
  dataLines: string[];
  cancelStatus: number;
  cancelBody: unknown;
  commandId: string;
}

/** Streams a long answer through exobar, cancels it after a few chunks, reads the stream to its end. */
async function streamAndCancel(salt: string): Promise<Outcome> {
  const response = await fetch(`${p.rig.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: LLAMA_1B, messages: makePrompt(30, salt), max_tokens: 2000, stream: true }),
  });
  expect(response.status).toBe(200);
  let cancel: Promise<Response> | null = null;
  let commandId = '';
  let chunks = 0;
  const lines = await readTimedLines(response, ({ line }) => {
    if (!line.startsWith('data: {') || cancel) return;
    commandId = (JSON.parse(line.slice(6)) as { id: string }).id;
    if (++chunks === 3) cancel = fetch(`${p.rig.url}/v1/cancel/${commandId}`, { method: 'POST' });
  });
  const answer = await cancel!;
  return { dataLines: lines.map((l) => l.line).filter((l) => l.startsWith('data:')), cancelStatus: answer.status, cancelBody: await answer.json(), commandId };
}

describe('a cancel through exobar ends as a cancel', () => {
  it(`ends the client's stream with finish_reason "cancelled" and [DONE], recorded cancelled, with exo's cancel answer held ${HOLD_MS} ms (${TRIES} tries, no error chunk)`, async () => {
    let errorChunks = 0;
    for (let i = 0; i < TRIES; i++) {
      const heldBefore = held!.held;
      const outcome = await streamAndCancel(`race-${i}`);
      errorChunks += outcome.dataLines.filter((l) => l.includes('"error"')).length;
      expect(outcome.cancelStatus).toBe(200);
      expect(outcome.cancelBody).toMatchObject({ cancelled: true, id: outcome.commandId, exo: { status: 200 } });
      expect(held!.held).toBe(heldBefore + 1);
      expect(outcome.dataLines.at(-1)).toBe('data: [DONE]');
      const last = JSON.parse(outcome.dataLines.at(-2)!.slice(6)) as { id: string; choices: Array<{ finish_reason: string | null }> };
      expect(last).toMatchObject({ id: outcome.commandId, choices: [{ finish_reason: 'cancelled' }] });
      expect(p.serving.traffic.find(outcome.commandId)).toMatchObject({ phase: 'cancelled', reason: 'cancelled by POST /v1/cancel' });
    }
    expect(errorChunks).toBe(0);
    await eventually(() => p.exo.worker.openCommands().length === 0, 5000, 'exo to have no open command');
  });

  it('ends as a cancel for the official openai client too: the last chunk says "cancelled", no error is raised', async () => {
    const openai = new OpenAI({ baseURL: `${p.rig.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: LLAMA_1B,
      messages: [{ role: 'user', content: makePrompt(30, 'oa')[0]!.content }],
      max_tokens: 2000,
      stream: true,
    });
    const reasons: Array<string | null> = [];
    for await (const chunk of stream) {
      reasons.push(chunk.choices[0]?.finish_reason ?? null);
      if (reasons.length === 3) void fetch(`${p.rig.url}/v1/cancel/${chunk.id}`, { method: 'POST' });
    }
    expect(reasons.at(-1)).toBe('cancelled');
    expect(reasons.slice(0, -1).every((r) => r === null)).toBe(true);
  });
});
