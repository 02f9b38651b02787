/**
 * The request log end to end: a real `exobar serve` (built out/) attached to the
 * serving fake exo, traffic from the official OpenAI client to a local sim model and
 * to an exo model, with done and cancelled outcomes; `/api/requests` and its CSV (read
 * with a CSV parser); the log across a clean restart and across a SIGKILL under
 * traffic, on the same data directory; the history of both models after the restart.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryAnswerSchema } from '../../shared/history';
import { REQUEST_RECORD_COLUMNS, RequestListSchema, type RequestList } from '../../shared/request-record';
import { startServe, type ServeProcess } from '../support/e2e/serve-process';
import { LLAMA_1B, startServingExo, type ServingExo } from '../support/fake-exo';
import { eventually, sleep } from '../support/eventually';

const LOCAL = 'sim/llama-3.2-1b';
/** A word that would show in the log if a prompt or an answer ever reached it. */
const SECRET = 'zebra-quartz-secret';

describe('request log', () => {
  let exo: ServingExo;
  let serve: ServeProcess;
  let dataDir: string;

  const get = async (path: string): Promise<Response> => fetch(`${serve.url}${path}`, { headers: { Authorization: `Bearer ${serve.token}` } });
  const list = async (query = ''): Promise<RequestList> => RequestListSchema.parse(await (await get(`/api/requests${query}`)).json());
  const openai = () => new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'User-Agent': 'request-log-test/1.0' } });
  const start = async () => {
    serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url], dataDir });
    await eventually(
      async () => ((await (await get('/api/state')).json()) as { instances: Array<{ model: string }> }).instances.some((i) => i.model === LLAMA_1B),
      20_000,
      'exo instances',
    );
    const res = await fetch(`${serve.url}/api/instances?wait=ready`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: LOCAL, instanceType: 'ring', fastSynch: 'auto' }),
    });
    expect(res.status).toBeLessThan(300);
  };
  /** Streams a request and drops it after its first content token: a client that went away. */
  const abandon = async (model: string) => {
    const stream = await openai().chat.completions.create({
      model,
      messages: [{ role: 'user', content: `${SECRET} tell a long story` }],
      max_tokens: 4000,
      stream: true,
    });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) break;
    stream.controller.abort();
  };

  beforeAll(async () => {
    exo = await startServingExo({ mode: 'blocking', timeScale: 0.05 });
    dataDir = await mkdtemp(join(tmpdir(), 'exobar-request-log-'));
    await start();
  }, 90_000);
  afterAll(async () => {
    await serve?.stop();
    await exo?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('records local and exo requests with their outcomes, never their text; the CSV parses', async () => {
    const client = openai();
    for (const model of [LOCAL, LLAMA_1B]) {
      for (let i = 0; i < 2; i++) {
        const answer = await client.chat.completions.create({ model, messages: [{ role: 'user', content: `${SECRET} ${i}` }], max_tokens: 8 });
        expect(answer.choices[0]?.message.content).toBeTruthy();
      }
      await abandon(model);
    }
    const log = await eventually(
      async () => {
        const got = await list();
        return got.requests.length >= 6 ? got : null;
      },
      20_000,
      'six requests in the log',
    );
    const of = (source: string, outcome: string) => log.requests.filter((r) => r.source === source && r.outcome === outcome);
    expect(of('local', 'done')).toHaveLength(2);
    expect(of('local', 'cancelled')).toHaveLength(1);
    expect(of('local', 'cancelled')[0]!.cancelledBy).toBe('client_disconnect');
    expect(of('exo', 'done')).toHaveLength(2);
    expect(of('exo', 'cancelled')).toHaveLength(1);
    expect(of('exo', 'cancelled')[0]!.cancelledBy).toBe('client_disconnect');
    for (const r of of('local', 'done')) {
      expect(r.model).toBe(LOCAL);
      expect(r.client).toBe('request-log-test/1.0');
      expect(r.outputTokens).toBe(8);
      expect(r.ttftMs).toBeGreaterThan(0);
      // The parts add up to the whole; for a local runner, the wait in the runner for its turn is its own part.
      expect(r.waitMs! + (r.runnerWaitMs ?? 0) + r.prefillMs! + r.firstTokenMs!).toBeCloseTo(r.ttftMs!, 3);
      expect(r.runnerWaitMs).not.toBeNull();
      expect(r.decodeTokensPerSecond).toBeGreaterThan(0);
      expect(r.itlP95Ms).toBeGreaterThan(0);
      expect(r.node).toBeTruthy();
    }
    for (const r of of('exo', 'done')) {
      expect(r.model).toBe(LLAMA_1B);
      expect(r.instance).toBeTruthy();
      expect(r.ttftMs).toBeGreaterThan(0);
      expect(r.outputTokens).toBeGreaterThan(0);
    }
    // Filters.
    expect((await list(`?source=exo&outcome=done`)).requests.map((r) => r.id).sort()).toEqual(
      of('exo', 'done')
        .map((r) => r.id)
        .sort(),
    );
    expect((await list(`?model=${encodeURIComponent(LOCAL)}&limit=1`)).requests).toHaveLength(1);
    expect((await list(`?since=${Date.now() + 60_000}`)).requests).toHaveLength(0);
    expect((await get('/api/requests?outcome=maybe')).status).toBe(400);
    expect((await fetch(`${serve.url}/api/requests`)).status).toBe(401);

    const csvResponse = await get('/api/requests.csv');
    expect(csvResponse.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parse(await csvResponse.text(), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(log.requests.length);
    expect(Object.keys(rows[0]!)).toEqual(REQUEST_RECORD_COLUMNS);
    const byId = new Map(log.requests.map((r) => [r.id, r]));
    for (const row of rows) {
      const record = byId.get(row.id!)!;
      expect(row.outcome).toBe(record.outcome);
      expect(Number(row.outputTokens)).toBe(record.outputTokens);
      expect(row.client).toBe('request-log-test/1.0');
    }

    // Written within half a second of the end.
    const file = await eventually(
      () =>
        readFile(join(dataDir, 'request-log', 'requests.jsonl'), 'utf8').then(
          (text) => (text.trim().split('\n').length >= 6 ? text : null),
          () => null,
        ),
      5_000,
      'the log on disk',
    );
    expect(file).not.toContain(SECRET);
    expect(file).not.toContain('story');
  });

  it('keeps the log across a restart and across a SIGKILL under traffic', async () => {
    const before = (await list()).requests.map((r) => r.id);
    expect(before.length).toBeGreaterThanOrEqual(6);
    await serve.stop();
    await start();
    expect((await list()).requests.map((r) => r.id)).toEqual(before);
    // The history kept the same requests, per model and minute.
    const history = HistoryAnswerSchema.parse(await (await get('/api/history?range=1h')).json());
    const sum = (model: string) => history.models.find((m) => m.model === model)?.points.reduce((n, p) => n + p.requests, 0);
    expect(sum(LOCAL)).toBe(3);
    expect(sum(LLAMA_1B)).toBe(3);
    expect(history.models.find((m) => m.model === LOCAL)!.points.some((p) => p.ttftP50Ms! > 0)).toBe(true);
    expect((await get('/api/history?range=2d')).status).toBe(400);

    // Traffic that does not stop: exobar is killed in the middle of it.
    const client = openai();
    let running = true;
    const traffic = (async () => {
      for (let i = 0; running; i++)
        await client.chat.completions.create({ model: LOCAL, messages: [{ role: 'user', content: `again ${i}` }], max_tokens: 3 }).catch(() => undefined);
    })();
    const seen = await eventually(
      async () => {
        const got = await list();
        return got.requests.length >= before.length + 10 ? got.requests.map((r) => r.id) : null;
      },
      30_000,
      'ten more requests logged',
    );
    // Those rows are flushed within half a second; the traffic goes on meanwhile, so the kill lands mid-stream.
    await sleep(1_200);
    await serve.kill('SIGKILL');
    running = false;
    await traffic;
    await serve.stop();
    await start();
    const after = await list();
    expect(after.problem).toBeNull();
    const ids = new Set(after.requests.map((r) => r.id));
    // Every row the API had shown a second before the kill was on disk (written within 0.5 s of its end).
    expect(seen.filter((id) => !ids.has(id))).toEqual([]);
    expect(after.requests.length).toBeGreaterThanOrEqual(seen.length);
    // And the log keeps going after the crash.
    await openai().chat.completions.create({ model: LOCAL, messages: [{ role: 'user', content: 'after' }], max_tokens: 2 });
    await eventually(async () => ((await list()).requests.length > after.requests.length ? true : null), 10_000, 'a new row after the restart');
  });
});
