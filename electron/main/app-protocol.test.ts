import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveAppRequest, serveAppRequest } from './app-protocol';
import { PAGE_CSP } from '../../shared/page-serving';

// A renderer directory with a secret file beside it, which no app:// URL may reach.
const scratch = mkdtempSync(join(tmpdir(), 'exobar-renderer-'));
const root = join(scratch, 'renderer');
mkdirSync(join(root, 'assets'), { recursive: true });
writeFileSync(join(root, 'index.html'), '<!doctype html><title>exobar</title>');
writeFileSync(join(root, 'assets', 'index-abc.js'), 'console.log(1)');
writeFileSync(join(scratch, 'exobar-secret.txt'), 'secret');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('app:// protocol', () => {
  it('maps the root and asset paths into the renderer directory', () => {
    expect(resolveAppRequest('app://exobar/', root)).toEqual({ file: join(root, 'index.html') });
    expect(resolveAppRequest('app://exobar/assets/index-abc.js?v=1', root)).toEqual({ file: join(root, 'assets', 'index-abc.js') });
  });

  it('refuses other hosts, paths escaping the root and malformed paths', () => {
    expect(resolveAppRequest('app://other/index.html', root)).toEqual({ status: 403 });
    // The URL parser already resolves dot segments, so this one stays inside the root.
    expect(resolveAppRequest('app://exobar/%2e%2e/exobar-secret.txt', root)).toEqual({ file: join(root, 'exobar-secret.txt') });
    expect(resolveAppRequest('app://exobar/assets/..%2F..%2Fexobar-secret.txt', root)).toEqual({ status: 403 });
    expect(resolveAppRequest('app://exobar/%E0%A4%A', root)).toEqual({ status: 400 });
    expect(resolveAppRequest('app://exobar/a%00b', root)).toEqual({ status: 400 });
  });

  it('serves files with their type and the CSP header, 404 for missing files', async () => {
    const page = await serveAppRequest('app://exobar/', root);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(await page.text()).toContain('<title>exobar</title>');
    const script = await serveAppRequest('app://exobar/assets/index-abc.js', root);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const missing = await serveAppRequest('app://exobar/nope.js', root);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect((await serveAppRequest('app://exobar/..%2Fexobar-secret.txt', root)).status).toBe(403);
    expect((await serveAppRequest('app://exobar/%2e%2e/exobar-secret.txt', root)).status).toBe(404);
  });
});
