import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Snapshot } from '../../../shared/snapshot';
import { catalog, instance, mlxModel, mlxSetupRunning, safePairPlan, snapshot } from '../../../test/support/renderer/fixtures';
import { BridgeError } from './bridge-error';
import { createHttpBridge } from './http-bridge';
import { sleep } from '../../../test/support/eventually';

const encoder = new TextEncoder();

/** A controllable SSE body. */
function sseBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    body,
    send: (s: Snapshot) => controller.enqueue(encoder.encode(`event: snapshot\ndata: ${JSON.stringify(s)}\n\n`)),
    raw: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close(),
  };
}

type Call = { url: string; init: RequestInit };

function fakeFetch(handler: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fn = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = String(input);
    calls.push({ url, init });
    return handler(url, init);
  });
  return { fetch: fn as unknown as typeof fetch, calls };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
const auth = (c: Call) => (c.init.headers as Record<string, string>).Authorization;

const unsubs: (() => void)[] = [];
afterEach(() => {
  unsubs.splice(0).forEach((u) => u());
});

describe('http bridge: snapshot stream', () => {
  it('reads snapshots from /api/events with the bearer token in a header, not the URL', async () => {
    const stream = sseBody();
    const { fetch, calls } = fakeFetch(() => new Response(stream.body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }));
    const bridge = createHttpBridge({ baseUrl: 'http://127.0.0.1:9', token: 'tok-1', fetch });
    const seen: number[] = [];
    const errors: (string | null)[] = [];
    unsubs.push(bridge.subscribeConnection((e) => errors.push(e)));
    unsubs.push(bridge.subscribeSnapshots((s) => seen.push(s.seq)));
    stream.send(snapshot({ seq: 1 }));
    stream.raw(': prefill comment\n\n');
    stream.send(snapshot({ seq: 2, instances: [instance()] }));
    await vi.waitFor(() => expect(seen).toEqual([1, 2]));
    expect(calls[0]?.url).toBe('http://127.0.0.1:9/api/events');
    expect(calls[0]?.url).not.toContain('tok-1');
    expect(auth(calls[0]!)).toBe('Bearer tok-1');
    expect(errors).toEqual([]);

    // A late subscriber gets the latest snapshot at once.
    const late: number[] = [];
    unsubs.push(bridge.subscribeSnapshots((s) => late.push(s.seq)));
    expect(late).toEqual([2]);
  });

  it('reconnects with backoff after the stream drops, reporting the loss and then the recovery', async () => {
    const streams = [sseBody(), sseBody()];
    let n = 0;
    const { fetch, calls } = fakeFetch(() => {
      const s = streams[n++];
      if (!s) return Promise.reject(new TypeError('fetch failed'));
      return new Response(s.body, { status: 200 });
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 't', fetch, backoff: { initialMs: 10, maxMs: 20 } });
    const errors: (string | null)[] = [];
    const seen: number[] = [];
    unsubs.push(bridge.subscribeConnection((e) => errors.push(e)));
    unsubs.push(bridge.subscribeSnapshots((s) => seen.push(s.seq)));
    streams[0]!.send(snapshot({ seq: 1 }));
    await vi.waitFor(() => expect(seen).toEqual([1]));
    streams[0]!.close();
    await vi.waitFor(() => expect(errors[0]).toMatch(/Lost connection to exobar at http:\/\/h: the server closed the event stream/));
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    streams[1]!.send(snapshot({ seq: 5 }));
    await vi.waitFor(() => expect(seen).toEqual([1, 5]));
    expect(errors.at(-1)).toBeNull();
  });

  it('stops retrying when the token is refused, and says so (not "cannot reach"), where the token is and what to open', async () => {
    const { fetch, calls } = fakeFetch(() =>
      json({ error: { message: 'the bearer token is wrong', code: 'invalid_token', tokenFile: '/Users/op/.exobar/token' } }, 401),
    );
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 'wrong', fetch, backoff: { initialMs: 1, maxMs: 1 } });
    const errors: [string | null, string | undefined][] = [];
    unsubs.push(bridge.subscribeConnection((e, problem) => errors.push([e, problem])));
    unsubs.push(bridge.subscribeSnapshots(() => {}));
    await vi.waitFor(() => expect(errors).toHaveLength(1));
    const [message, problem] = errors[0]!;
    expect(problem).toBe('token_refused');
    expect(message).toContain("refused this page's access token");
    expect(message).toContain('The token is in /Users/op/.exobar/token');
    expect(message).toContain('http://h/#token=');
    expect(message).toContain('The token stays the same when the server restarts.');
    expect(message).not.toMatch(/new (one|token)/);
    await sleep(30);
    expect(calls).toHaveLength(1);
    // An action refused the same way says the same.
    await expect(bridge.stopAll()).rejects.toMatchObject({ code: 'token_refused', message });
  });

  it('reports a stream that is not a snapshot as a connection error', async () => {
    const stream = sseBody();
    const { fetch } = fakeFetch(() => new Response(stream.body, { status: 200 }));
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 't', fetch, backoff: { initialMs: 1000, maxMs: 1000 } });
    const errors: (string | null)[] = [];
    unsubs.push(bridge.subscribeConnection((e) => errors.push(e)));
    unsubs.push(bridge.subscribeSnapshots(() => {}));
    stream.raw('data: {"seq":"one"}\n\n');
    await vi.waitFor(() => expect(errors[0]).toMatch(/does not understand \(seq:/));
  });

  it('takes the MLX state along with the snapshot, and refuses one of the wrong shape', async () => {
    const stream = sseBody();
    const { fetch } = fakeFetch(() => new Response(stream.body, { status: 200 }));
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 't', fetch, backoff: { initialMs: 1000, maxMs: 1000 } });
    const errors: (string | null)[] = [];
    const seen: Snapshot[] = [];
    unsubs.push(bridge.subscribeConnection((e) => errors.push(e)));
    unsubs.push(bridge.subscribeSnapshots((s) => seen.push(s)));
    stream.send(snapshot({ seq: 1, mlx: mlxSetupRunning() }));
    await vi.waitFor(() => expect(seen.at(-1)?.mlx?.setup?.step).toBe('install-mlx-lm'));
    stream.raw(`data: ${JSON.stringify({ ...snapshot({ seq: 2 }), mlx: { available: 'yes' } })}\n\n`);
    await vi.waitFor(() => expect(errors[0]).toMatch(/does not understand \(mlx\.available:/));
  });

  it('without a token asks once, unauthenticated, and says where the token is', async () => {
    const { fetch, calls } = fakeFetch(() => json({ error: { message: 'needs a token', code: 'missing_token', tokenFile: '/data/token' } }, 401));
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: null, fetch });
    const errors: [string | null, string | undefined][] = [];
    unsubs.push(bridge.subscribeConnection((e, problem) => errors.push([e, problem])));
    unsubs.push(bridge.subscribeSnapshots(() => {}));
    expect(errors[0]?.[1]).toBe('no_token');
    await vi.waitFor(() => expect(errors.at(-1)?.[0]).toContain('The token is in /data/token'));
    expect(errors.at(-1)?.[1]).toBe('no_token');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe('http://h/api/state');
    expect(calls[0]?.init.headers).toBeUndefined();
  });

  it('says "nothing answers" (unreachable) when the server was never reached, and keeps retrying', async () => {
    const { fetch, calls } = fakeFetch(() => Promise.reject(new TypeError('fetch failed')));
    const bridge = createHttpBridge({ baseUrl: 'http://h:7', token: 't', fetch, backoff: { initialMs: 5, maxMs: 5 } });
    const errors: [string | null, string | undefined][] = [];
    unsubs.push(bridge.subscribeConnection((e, problem) => errors.push([e, problem])));
    unsubs.push(bridge.subscribeSnapshots(() => {}));
    await vi.waitFor(() => expect(calls.length).toBeGreaterThanOrEqual(2));
    expect(errors[0]).toEqual([
      'Nothing answers at http://h:7 (fetch failed). If exobar stopped, start it again with `exobar serve` and reload this page.',
      'unreachable',
    ]);
  });

  it('closes the stream when the last subscriber leaves', async () => {
    let signal: AbortSignal | undefined;
    const { fetch } = fakeFetch((_u, init) => {
      signal = init.signal ?? undefined;
      return new Response(sseBody().body, { status: 200 });
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 't', fetch });
    const unsubscribe = bridge.subscribeSnapshots(() => {});
    await vi.waitFor(() => expect(signal).toBeDefined());
    unsubscribe();
    expect(signal?.aborted).toBe(true);
  });
});

describe('http bridge: actions', () => {
  it('maps every action to its endpoint with the token', async () => {
    const { fetch, calls } = fakeFetch((url, init) => {
      if (url.endsWith('/api/launch/safe-pair') && (init.method ?? 'GET') === 'GET') return json(safePairPlan());
      if (url.endsWith('/api/instances') && init.method === 'POST') return json({ id: 'inst-9', model: 'm' }, 201);
      return new Response(null, { status: 204 });
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h:1', token: 'T', fetch });
    expect((await bridge.getSafePairPlan()).models).toHaveLength(2);
    await bridge.launchSafePair();
    expect(await bridge.createInstance({ model: 'sim/llama-3.2-1b' })).toEqual({ id: 'inst-9' });
    await bridge.updateInstance('inst 1', { fastSynch: 'off', mode: 'drain' });
    await bridge.stopInstance('inst-1');
    await bridge.cancelRequest('chatcmpl-1');
    await bridge.stopAll();
    const lines = calls.map((c) => `${c.init.method ?? 'GET'} ${c.url.replace('http://h:1', '')}`);
    expect(lines).toEqual([
      'GET /api/launch/safe-pair',
      'POST /api/launch/safe-pair',
      'POST /api/instances',
      'PATCH /api/instances/inst%201',
      'DELETE /api/instances/inst-1',
      'POST /v1/cancel/chatcmpl-1',
      'DELETE /api/instances',
    ]);
    expect(calls.every((c) => auth(c) === 'Bearer T')).toBe(true);
    expect(JSON.parse(String(calls[3]?.init.body))).toEqual({ fastSynch: 'off', mode: 'drain' });
  });

  it('probes, attaches and detaches exo through /api/exo with the token, and rejects with why an attach was refused', async () => {
    const { fetch, calls } = fakeFetch((url, init) => {
      if (url.includes('/api/exo/probe')) return json({ ok: true, url: 'http://10.0.0.5:52415', nodeId: 'n'.repeat(32), nodes: 2 });
      if (url.endsWith('/api/exo/attach') && JSON.parse(String(init.body)).url === 'http://nothing:1') {
        return json({ error: { message: 'nothing exo-like answers at http://nothing:1: connection refused', code: 'exo_not_found' } }, 502);
      }
      return json({ ok: true });
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h:1', token: 'T', fetch });
    expect(await bridge.probeExo('http://10.0.0.5:52415')).toMatchObject({ ok: true, nodes: 2 });
    await bridge.attachExo('http://10.0.0.5:52415');
    await expect(bridge.attachExo('http://nothing:1')).rejects.toThrow('nothing exo-like answers at http://nothing:1: connection refused');
    await bridge.detachExo();
    expect(calls.map((c) => `${c.init.method ?? 'GET'} ${c.url.replace('http://h:1', '')}`)).toEqual([
      'GET /api/exo/probe?url=http%3A%2F%2F10.0.0.5%3A52415',
      'POST /api/exo/attach',
      'POST /api/exo/attach',
      'POST /api/exo/detach',
    ]);
    expect(JSON.parse(String(calls[1]?.init.body))).toEqual({ url: 'http://10.0.0.5:52415' });
    expect(calls.every((c) => auth(c) === 'Bearer T')).toBe(true);
  });

  it('sends a confirmed stop with {"confirm": true} on the same paths, and a 409 requests_in_flight rejects with its code and count', async () => {
    const { fetch, calls } = fakeFetch((_url, init) =>
      init.body
        ? new Response(null, { status: 204 })
        : json({ error: { message: '2 requests will end if this model stops', code: 'requests_in_flight', param: 'confirm', requests: 2 } }, 409),
    );
    const bridge = createHttpBridge({ baseUrl: 'http://h:1', token: 'T', fetch });
    const refused = await bridge.stopInstance('inst-1').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BridgeError);
    expect(refused).toMatchObject({ code: 'requests_in_flight', requests: 2, message: '2 requests will end if this model stops' });
    await bridge.stopInstance('inst-1', { confirm: true });
    await bridge.stopAll({ confirm: true });
    expect(calls.map((c) => `${c.init.method} ${c.url.replace('http://h:1', '')} ${String(c.init.body ?? '')}`)).toEqual([
      'DELETE /api/instances/inst-1 ',
      'DELETE /api/instances/inst-1 {"confirm":true}',
      'DELETE /api/instances {"confirm":true}',
    ]);
  });

  it('throws the API error message', async () => {
    const { fetch } = fakeFetch(() =>
      json({ error: { message: 'Two ring runners with fast synch on: pass acknowledgeRisk', code: 'fast_synch_shared_gpu' } }, 409),
    );
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 'T', fetch });
    await expect(bridge.updateInstance('i', { fastSynch: 'on' })).rejects.toThrow('Two ring runners with fast synch on: pass acknowledgeRisk');
  });

  it("starts, stops and restarts this Mac's exo at /api/exo/process, and a refused restart rejects with the server's words", async () => {
    const { fetch, calls } = fakeFetch((url, init) => {
      if (url.endsWith('/restart') && !JSON.parse(String(init.body)).consent) {
        return json(
          { error: { message: 'A restart deletes every instance that spans this Mac. Send "consent": true to restart.', code: 'exo_restart_required' } },
          409,
        );
      }
      return json({ status: 'starting' }, 202);
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h:1', token: 'T', fetch });
    await bridge.controlExoProcess({ action: 'start', fastSynch: 'off' });
    await bridge.controlExoProcess({ action: 'stop' });
    await bridge.controlExoProcess({ action: 'restart', consent: true });
    await expect(bridge.controlExoProcess({ action: 'restart', consent: false })).rejects.toThrow(/A restart deletes every instance that spans this Mac/);
    expect(calls.map((c) => `${c.init.method} ${c.url.replace('http://h:1', '')} ${String(c.init.body ?? '')}`)).toEqual([
      'POST /api/exo/process/start {"fastSynch":"off"}',
      'POST /api/exo/process/stop ',
      'POST /api/exo/process/restart {"consent":true}',
      'POST /api/exo/process/restart {"consent":false}',
    ]);
    expect(calls.every((c) => auth(c) === 'Bearer T')).toBe(true);
  });

  it('describes a non-JSON failure and an unreachable server', async () => {
    const bridge = createHttpBridge({
      baseUrl: 'http://h',
      token: 'T',
      fetch: fakeFetch(() => new Response('oops', { status: 502, statusText: 'Bad Gateway' })).fetch,
    });
    await expect(bridge.stopInstance('x')).rejects.toThrow('The server answered 502 Bad Gateway');
    const down = createHttpBridge({ baseUrl: 'http://h', token: 'T', fetch: fakeFetch(() => Promise.reject(new TypeError('fetch failed'))).fetch });
    await expect(down.stopInstance('x')).rejects.toThrow('Nothing answers at http://h (fetch failed)');
  });

  it('downloads the diagnostic bundle under the server-given name', async () => {
    const zip = new Uint8Array([0x50, 0x4b, 3, 4]);
    const { fetch } = fakeFetch(
      () =>
        new Response(zip, {
          status: 200,
          headers: { 'Content-Type': 'application/zip', 'Content-Disposition': 'attachment; filename="exobar-diagnostics-x.zip"' },
        }),
    );
    const saveFile = vi.fn();
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 'T', fetch, saveFile });
    expect(await bridge.exportDiagnostics()).toEqual({ saved: true, location: 'exobar-diagnostics-x.zip' });
    const [blob, name] = saveFile.mock.calls[0] as [Blob, string];
    expect(name).toBe('exobar-diagnostics-x.zip');
    expect(new Uint8Array(await blob.arrayBuffer())).toEqual(zip);
  });

  it('starts the MLX setup (202), refreshes the runtime and lists the catalog, with the token', async () => {
    const { fetch, calls } = fakeFetch((url) => {
      if (url.endsWith('/api/mlx/setup')) return json(mlxSetupRunning(), 202);
      if (url.endsWith('/api/mlx/refresh')) return json(mlxSetupRunning());
      return json({ models: catalog([mlxModel()]) });
    });
    const bridge = createHttpBridge({ baseUrl: 'http://h:1', token: 'T', fetch });
    await bridge.setupMlxRuntime();
    await bridge.refreshMlxRuntime();
    const models = await bridge.listModels();
    expect(calls.map((c) => `${c.init.method ?? 'GET'} ${c.url.replace('http://h:1', '')}`)).toEqual([
      'POST /api/mlx/setup',
      'POST /api/mlx/refresh',
      'GET /api/models',
    ]);
    expect(calls.every((c) => auth(c) === 'Bearer T')).toBe(true);
    expect(models.map((m) => [m.id, m.engine, m.simulated])).toEqual([
      ['sim/llama-3.2-1b', 'sim', true],
      ['sim/llama-3.2-3b', 'sim', true],
      ['mlx/mlx-community/Llama-3.2-3B-Instruct-4bit', 'mlx', false],
    ]);
  });

  it("the MLX setup refused off Apple silicon (409) rejects with the server's words", async () => {
    const { fetch } = fakeFetch(() =>
      json(
        {
          error: {
            message: 'MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here',
            type: 'invalid_request_error',
            code: 'mlx_unsupported',
          },
        },
        409,
      ),
    );
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 'T', fetch });
    await expect(bridge.setupMlxRuntime()).rejects.toThrow('MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here');
  });

  it('refuses a model list it does not understand, saying what was wrong', async () => {
    const { fetch } = fakeFetch(() => json({ models: [{ id: 'sim/x', name: 'X', engine: 'sim', simulated: 'yes', memoryBytes: 1, sizeClass: 'small' }] }));
    const bridge = createHttpBridge({ baseUrl: 'http://h', token: 'T', fetch });
    await expect(bridge.listModels()).rejects.toThrow('The server sent a model list this page does not understand (models.0.simulated:');
  });
});
