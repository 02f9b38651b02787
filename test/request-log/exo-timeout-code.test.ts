/**
 * A request exo leaves hanging ends as `exo_timeout` everywhere exobar records it: the
 * client's error, the request log (`/api/requests`), the history's error count and
 * `exobar_requests_total{code}`, on each of the proxy's three idle-timeout paths (no
 * answer at all; a whole answer that stops mid-body; a stream that goes silent). The
 * code travels from where the proxy decided it; no record is made from its words.
 *
 * The real core attached to the serving fake exo through a small proxy that can cut a
 * whole answer short (the fake exo writes its whole answers in one piece).
 */
import { createServer, request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APIError } from 'openai';
import { HistoryAnswerSchema } from '../../shared/history';
import { RequestListSchema } from '../../shared/request-record';
import { startCoreRig, type CoreRig } from '../support/api-harness';
import { eventually } from '../support/eventually';
import { LLAMA_1B, startServingExo, type ServingExo } from '../support/fake-exo';
import { listenOnLoopback } from '../support/loopback-server';

/** A proxy to exo that, when told, sends the next chat answer's head and half its body, then nothing. */
async function startCuttingProxy(target: string): Promise<{ url: string; cutNext: () => void; close(): Promise<void> }> {
  const upstream = new URL(target);
  let cut = false;
  const server = createServer((req, res) => {
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer: IncomingMessage) => {
      const cutThis = cut && req.method === 'POST' && req.url === '/v1/chat/completions';
      if (!cutThis) {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        return;
      }
      cut = false;
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const whole = Buffer.concat(chunks);
        res.writeHead(answer.statusCode ?? 502, { 'content-type': String(answer.headers['content-type']), 'content-length': String(whole.length) });
        res.write(whole.subarray(0, Math.floor(whole.length / 2)));
      });
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
    res.on('close', () => !res.writableFinished && out.destroy());
  });
  const listening = await listenOnLoopback(server);
  return { ...listening, cutNext: () => (cut = true) };
}

let exo: ServingExo;
let cutting: Awaited<ReturnType<typeof startCuttingProxy>>;
let rig: CoreRig;

beforeAll(async () => {
  exo = await startServingExo({ timeScale: 0.05 });
  cutting = await startCuttingProxy(exo.url);
  rig = await startCoreRig({ exoUrl: cutting.url, exo: { offerUrl: null, exoLogDir: null, proxyIdleTimeoutMs: 1_000 } });
  await eventually(() => rig.node.snapshot().instances.some((i) => i.model === LLAMA_1B), 20_000, "exo's instances");
}, 60_000);
afterAll(async () => {
  await rig?.close();
  await cutting?.close();
  await exo?.close();
});

/** Sends one chat request and returns the code of the error the openai client raised. */
async function errorCodeOf(stream: boolean): Promise<string | null> {
  try {
    const messages = [{ role: 'user' as const, content: `w1 w2 w3 ${Math.random()}` }];
    if (stream) {
      for await (const chunk of await rig.client.chat.completions.create({ model: LLAMA_1B, messages, max_tokens: 4, stream: true })) void chunk;
    } else {
      await rig.client.chat.completions.create({ model: LLAMA_1B, messages, max_tokens: 4 });
    }
    return null;
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return String(error.code ?? (error.error as { code?: string } | undefined)?.code ?? error.message);
  }
}

describe('a request exo leaves hanging', () => {
  it('is exo_timeout for the client, in the request log, the history and exobar_requests_total, on all three idle paths', async () => {
    // No answer at all: exo's headers never come.
    exo.inject('hang', { path: '/v1/chat/completions', times: 1 });
    expect(await errorCodeOf(false)).toBe('exo_timeout');
    // A whole answer that stops mid-body.
    cutting.cutNext();
    expect(await errorCodeOf(false)).toBe('exo_timeout');
    // A stream that goes silent after its first token.
    exo.chat.injectStreamFault('hang');
    expect(await errorCodeOf(true)).toBe('exo_timeout');

    const failed = await eventually(
      async () => {
        const list = RequestListSchema.parse((await rig.control('GET', '/api/requests')).body);
        const exoFailed = list.requests.filter((r) => r.source === 'exo' && r.outcome === 'failed');
        return exoFailed.length === 3 ? exoFailed : null;
      },
      10_000,
      'three failed exo requests in the log',
    );
    expect(failed.map((r) => r.errorCode)).toEqual(['exo_timeout', 'exo_timeout', 'exo_timeout']);

    const history = HistoryAnswerSchema.parse((await rig.control('GET', `/api/history?model=${encodeURIComponent(LLAMA_1B)}&range=1h`)).body);
    expect(history.models.flatMap((m) => m.points).reduce((n, p) => n + p.errors, 0)).toBe(3);

    const metrics = String((await rig.control('GET', '/metrics')).body);
    const timeouts = metrics.split('\n').filter((line) => line.startsWith('exobar_requests_total{') && line.includes('code="exo_timeout"'));
    expect(timeouts.reduce((n, line) => n + Number(line.split(' ').at(-1)), 0)).toBe(3);
    expect(metrics).not.toMatch(/exobar_requests_total\{[^}]*code="exo_error"/);
  }, 60_000);
});
