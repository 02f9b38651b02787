/**
 * The HTTP boundary: Host (DNS rebinding) and Origin (CSRF) checks, the body limit,
 * malformed input. Every refusal is answered in OpenAI's error shape, counted in the
 * snapshot's rejectedInputs.http, and the server keeps serving.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNode } from '../../../test/support/fake-node';
import { startServerRig, TEST_TOKEN, type ApiRig } from '../../../test/support/api-harness';
import { allowedHostNames, checkHost, checkOrigin } from './http-security';

let node: FakeNode;
let rig: ApiRig;
let port: number;

beforeAll(async () => {
  node = new FakeNode();
  rig = await startServerRig(node, { bodyLimitBytes: 64 * 1024 });
  port = Number(new URL(rig.url).port);
  await node.createInstance({ model: 'sim/llama-3.2-1b', instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
});

afterAll(async () => {
  await rig?.close();
});

/** A raw request, so Host and Origin can be anything (fetch fixes Host). */
function raw(options: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const rejectedHttp = () => node.snapshot().rejectedInputs.http ?? 0;
const auth = { Authorization: `Bearer ${TEST_TOKEN}` };

describe('Host header (DNS rebinding)', () => {
  it('accepts localhost and 127.0.0.1 with the right port, refuses other names and ports with 421', async () => {
    expect((await raw({ path: '/api/state', headers: { ...auth, Host: `localhost:${port}` } })).status).toBe(200);
    expect((await raw({ path: '/api/state', headers: { ...auth, Host: `127.0.0.1:${port}` } })).status).toBe(200);
    const before = rejectedHttp();
    const rebound = await raw({ path: '/api/state', headers: { ...auth, Host: `evil.example:${port}` } });
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error.code).toBe('host_not_allowed');
    expect((await raw({ path: '/v1/models', headers: { Host: `localhost:${port + 1}` } })).status).toBe(421);
    expect((await raw({ path: '/', headers: { Host: 'evil.example' } })).status).toBe(421);
    expect(rejectedHttp()).toBe(before + 3);
  });

  it('checks names and ports exactly', () => {
    const policy = { hostNames: allowedHostNames('127.0.0.1'), port: 52416, extraOrigins: new Set<string>() };
    expect(checkHost('LOCALHOST:52416', policy)).toBeNull();
    expect(checkHost('[::1]:52416', policy)).toBeNull();
    expect(checkHost('localhost', policy)?.status).toBe(421);
    expect(checkHost('localhost.evil.example:52416', policy)?.status).toBe(421);
    expect(checkHost(undefined, policy)?.status).toBe(421);
  });
});

describe('Origin header (other web pages)', () => {
  it('refuses a foreign origin with 403 on every route, accepts its own and none', async () => {
    const before = rejectedHttp();
    for (const path of ['/v1/models', '/api/state', '/']) {
      const foreign = await raw({ path, headers: { ...auth, Origin: 'https://evil.example' } });
      expect(foreign.status).toBe(403);
      expect(JSON.parse(foreign.body).error).toMatchObject({ code: 'origin_not_allowed', type: 'permission_error' });
    }
    const post = await raw({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { Origin: 'http://evil.example', 'Content-Type': 'text/plain' },
      body: JSON.stringify({ model: 'sim/llama-3.2-1b', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(post.status).toBe(403);
    expect((await raw({ path: '/api/state', headers: { ...auth, Origin: 'null' } })).status).toBe(403);
    expect(rejectedHttp()).toBe(before + 5);
    expect(node.submitted).toHaveLength(0);
    expect((await raw({ path: '/api/state', headers: { ...auth, Origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
    expect((await raw({ path: '/api/state', headers: { ...auth, Origin: `http://localhost:${port}` } })).status).toBe(200);
  });

  it('treats another port or scheme on localhost as another origin', () => {
    const policy = { hostNames: allowedHostNames('127.0.0.1'), port: 52416, extraOrigins: new Set(['http://localhost:5173']) };
    expect(checkOrigin('http://localhost:52416', policy)).toBeNull();
    expect(checkOrigin('http://localhost:5173', policy)).toBeNull();
    expect(checkOrigin('http://localhost:8080', policy)?.status).toBe(403);
    expect(checkOrigin('https://localhost:52416', policy)?.status).toBe(403);
    expect(checkOrigin('http://127.0.0.1.evil.example:52416', policy)?.status).toBe(403);
  });
});

describe('bodies', () => {
  const post = (body: string | Buffer, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    raw({ method: 'POST', path: '/v1/chat/completions', headers: { Host: `127.0.0.1:${port}`, ...headers }, body });

  it('413 for a body over the limit, by Content-Length or chunked, and keeps serving', async () => {
    const before = rejectedHttp();
    const big = Buffer.alloc(65 * 1024, 'a');
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error.code).toBe('body_too_large');
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve(-1) : reject(e)));
      for (let i = 0; i < 20; i++) req.write(Buffer.alloc(8 * 1024, 'b'));
      req.end();
    });
    expect(chunked).toBe(413);
    expect(rejectedHttp()).toBe(before + 2);
    expect((await raw({ path: '/v1/models' })).status).toBe(200);
  });

  it('400 for invalid JSON or an empty body, 415 for form and text bodies, each saying what to send', async () => {
    const broken = await post('{"model": ');
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body).error).toMatchObject({ code: 'invalid_json', type: 'invalid_request_error' });
    const empty = await post('');
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body).error.message).toMatch(/empty/);
    const notObject = await post('[1,2]');
    expect(notObject.status).toBe(400);
    const form = await post('model=x', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(JSON.parse(form.body).error.message).toMatch(/application\/json/);
  });

  it('counts every refused input in the snapshot and serves the next request', async () => {
    const before = rejectedHttp();
    await post('nope');
    await raw({ path: '/api/state', headers: { Authorization: 'Bearer wrong-token-000000' } });
    expect(rejectedHttp()).toBe(before + 2);
    const state = await raw({ path: '/api/state', headers: auth });
    expect(JSON.parse(state.body).rejectedInputs.http).toBe(before + 2);
  });

  it('puts nosniff and no-referrer on every answer', async () => {
    const answer = await raw({ path: '/v1/models' });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
  });
});
