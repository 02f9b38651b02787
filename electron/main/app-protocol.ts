/**
 * The `app://exobar/` protocol that serves the built renderer from disk. Electron's
 * security checklist prefers a custom protocol to file://: the page gets a real
 * origin (so the IPC sender check and CSP 'self' mean something) and can read only
 * files under the renderer directory.
 */
import { readFile } from 'node:fs/promises';
import { join, normalize, relative, isAbsolute } from 'node:path';
import type { Protocol } from 'electron';
import { contentTypeOf, PAGE_CSP } from '../../shared/page-serving';
import { APP_HOST, APP_SCHEME } from './security';

/** Must run before the app is ready: a standard, secure scheme (real origin, fetch allowed). */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
}

/**
 * The file a request maps to under `rootDir`, or an HTTP status when it must not be
 * served: another host (403), a path escaping the root (403), a malformed path (400).
 */
export function resolveAppRequest(url: string, rootDir: string): { file: string } | { status: 400 | 403 } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { status: 400 };
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return { status: 403 };
  let pathname: string;
  try {
    pathname = decodeURIComponent(parsed.pathname);
  } catch {
    return { status: 400 };
  }
  if (pathname.includes('\0')) return { status: 400 };
  const rel = normalize(pathname === '/' || pathname === '' ? 'index.html' : pathname.replace(/^\/+/, ''));
  const file = join(rootDir, rel);
  const inside = relative(rootDir, file);
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return { status: 403 };
  return { file };
}

/** Answers one app:// request from `rootDir`, with the CSP header on every answer. */
export async function serveAppRequest(url: string, rootDir: string): Promise<Response> {
  const headers = { 'Content-Security-Policy': PAGE_CSP, 'X-Content-Type-Options': 'nosniff' };
  const resolved = resolveAppRequest(url, rootDir);
  if ('status' in resolved) return new Response(null, { status: resolved.status, headers });
  try {
    const body = await readFile(resolved.file);
    return new Response(new Uint8Array(body), { status: 200, headers: { ...headers, 'Content-Type': contentTypeOf(resolved.file) } });
  } catch {
    return new Response(null, { status: 404, headers });
  }
}

/** Serves the renderer directory on app://exobar/ (after the app is ready). */
export function handleAppProtocol(protocol: Pick<Protocol, 'handle'>, rootDir: string): void {
  protocol.handle(APP_SCHEME, (request) => serveAppRequest(request.url, rootDir));
}
