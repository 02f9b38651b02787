/**
 * The renderer served at `/`: files with their content types, the app page for app
 * paths, no escape from the build directory, the CSP on the page, and a page saying
 * how to build it when it is missing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNode } from '../../../test/support/fake-node';
import { startServerRig, type ApiRig } from '../../../test/support/api-harness';
import { PAGE_CSP } from '../../../shared/page-serving';

let root: string;
let dir: string;
let built: ApiRig;
let unbuilt: ApiRig;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'exobar-renderer-'));
  dir = join(root, 'build');
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>exobar</title><script type="module" src="/assets/app-1234.js"></script>');
  writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log("app")');
  writeFileSync(join(dir, 'assets', 'app-1234.css'), 'body{}');
  writeFileSync(join(dir, '..', 'exobar-secret.txt'), 'outside the build');
  built = await startServerRig(new FakeNode(), { rendererDir: dir });
  unbuilt = await startServerRig(new FakeNode(), { rendererDir: join(dir, 'missing') });
});

afterAll(async () => {
  await built?.close();
  await unbuilt?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A raw GET, so `..` reaches the server unnormalized. */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('serving the renderer', () => {
  it('serves index.html at / with the CSP, nosniff and no framing', async () => {
    const page = await fetch(`${built.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // The one policy of the page, the same the Electron popover sends (shared/page-serving.ts).
    expect(page.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<title>exobar</title>');
  });

  it('serves assets with their content types and long caching', async () => {
    const js = await fetch(`${built.url}/assets/app-1234.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toMatch(/immutable/);
    expect(await js.text()).toBe('console.log("app")');
    expect((await fetch(`${built.url}/assets/app-1234.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers app paths with index.html and missing assets with 404', async () => {
    expect(await (await fetch(`${built.url}/instances/x`)).text()).toContain('<title>exobar</title>');
    expect((await fetch(`${built.url}/assets/missing.js`)).status).toBe(404);
  });

  it('never serves a file outside the build directory', async () => {
    for (const path of ['/../exobar-secret.txt', '/%2e%2e/exobar-secret.txt', '/assets/..%2f..%2fexobar-secret.txt']) {
      const answer = await rawGet(built.url, path);
      expect(answer.body).not.toContain('outside the build');
    }
  });

  it('says how to build the page when it is missing', async () => {
    const page = await fetch(`${unbuilt.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('npm run build:renderer');
    expect(page.headers.get('content-security-policy')).toBeTruthy();
  });

  it('does not serve the page for other methods', async () => {
    expect((await fetch(`${built.url}/`, { method: 'POST' })).status).toBe(405);
  });
});
