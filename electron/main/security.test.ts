import { describe, expect, it, vi } from 'vitest';
import { PAGE_CSP } from '../../shared/page-serving';
import { hardenSession, hardenWebContents, isAllowedRequestUrl, isSafeExternalUrl, withCspHeader } from './security';

describe('security rules', () => {
  it('the CSP allows only the app itself: no remote scripts, no eval, no inline script, no frames', () => {
    const directives = Object.fromEntries(PAGE_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(PAGE_CSP).not.toMatch(/unsafe-eval|unsafe-inline|https?:|\*/);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
  });

  it('external links: http(s) only, no credentials in the URL', () => {
    expect(isSafeExternalUrl('https://github.com/exo-explore/exo')).toBe(true);
    expect(isSafeExternalUrl('http://127.0.0.1:52416/v1/models')).toBe(true);
    for (const bad of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'smb://host/share',
      'https://user:pw@example.com',
      'not a url',
      'app://exobar/index.html',
    ]) {
      expect(isSafeExternalUrl(bad), bad).toBe(false);
    }
  });

  it('requests: only the app protocol on its own host, data: and devtools', () => {
    expect(isAllowedRequestUrl('app://exobar/assets/index.js')).toBe(true);
    expect(isAllowedRequestUrl('data:image/png;base64,AAAA')).toBe(true);
    for (const bad of ['https://cdn.example.com/x.js', 'http://127.0.0.1:52416/api/events', 'ws://localhost:1/', 'file:///etc/hosts', 'app://other/x']) {
      expect(isAllowedRequestUrl(bad), bad).toBe(false);
    }
  });

  it('replaces any CSP header a response had, whatever its case', () => {
    const headers = withCspHeader({ 'content-security-policy': ['default-src *'], 'Content-Type': 'text/html' });
    expect(headers).toEqual({ 'Content-Type': ['text/html'], 'Content-Security-Policy': [PAGE_CSP] });
  });

  it('hardenSession: CSP on responses, remote requests cancelled, permissions refused', () => {
    const hooks: Record<string, (...args: never[]) => unknown> = {};
    const session = {
      webRequest: {
        onHeadersReceived: (fn: never) => (hooks.headers = fn),
        onBeforeRequest: (fn: never) => (hooks.before = fn),
      },
      setPermissionRequestHandler: (fn: never) => (hooks.permission = fn),
      setPermissionCheckHandler: (fn: never) => (hooks.check = fn),
    };
    const blocked = vi.fn();
    hardenSession(session as never, blocked);
    const headerCallback = vi.fn();
    (hooks.headers as (d: unknown, cb: unknown) => void)({ responseHeaders: {} }, headerCallback);
    expect(headerCallback).toHaveBeenCalledWith({ responseHeaders: { 'Content-Security-Policy': [PAGE_CSP] } });
    const requestCallback = vi.fn();
    (hooks.before as (d: unknown, cb: unknown) => void)({ url: 'https://evil.example/x.js' }, requestCallback);
    expect(requestCallback).toHaveBeenCalledWith({ cancel: true });
    expect(blocked).toHaveBeenCalledWith('https://evil.example/x.js');
    (hooks.before as (d: unknown, cb: unknown) => void)({ url: 'app://exobar/index.html' }, requestCallback);
    expect(requestCallback).toHaveBeenLastCalledWith({ cancel: false });
    const permissionCallback = vi.fn();
    (hooks.permission as (w: unknown, p: unknown, cb: unknown) => void)({}, 'media', permissionCallback);
    expect(permissionCallback).toHaveBeenCalledWith(false);
    expect((hooks.check as () => boolean)()).toBe(false);
  });

  it('hardenWebContents: navigation and new windows denied; http(s) links go to the browser', () => {
    const listeners: Record<string, (event: { preventDefault(): void }, url?: string) => void> = {};
    let openHandler: ((details: { url: string }) => { action: string }) | null = null;
    const contents = {
      setWindowOpenHandler: (fn: typeof openHandler) => (openHandler = fn),
      on: (name: string, fn: (typeof listeners)[string]) => (listeners[name] = fn),
    };
    const shell = { openExternal: vi.fn(async () => undefined) };
    hardenWebContents(contents as never, shell);

    expect(openHandler!({ url: 'https://github.com/ml-explore/mlx' })).toEqual({ action: 'deny' });
    expect(shell.openExternal).toHaveBeenCalledWith('https://github.com/ml-explore/mlx');
    expect(openHandler!({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(shell.openExternal).toHaveBeenCalledTimes(1);

    for (const name of ['will-navigate', 'will-redirect', 'will-attach-webview']) {
      const event = { preventDefault: vi.fn() };
      listeners[name]!(event, 'javascript:alert(1)');
      expect(event.preventDefault, name).toHaveBeenCalled();
    }
    expect(shell.openExternal).toHaveBeenCalledTimes(1);
  });
});
