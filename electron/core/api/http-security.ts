/**
 * The checks every request passes before any route runs: the Host header (DNS
 * rebinding) and the Origin header (CSRF from other web pages), plus the security
 * headers every answer carries.
 *
 * Why both: a page on evil.example can make the browser send requests to
 * 127.0.0.1:52416 (CSRF; the browser adds an `Origin: https://evil.example` header),
 * or rebind its own name to 127.0.0.1 so the browser thinks it is same-origin
 * (DNS rebinding; the `Host` header then says `evil.example:52416`).
 */
import { networkInterfaces } from 'node:os';
import type { ServerResponse } from 'node:http';
import { rejected, type ApiError } from './api-error';
import { PAGE_CSP } from '../../../shared/page-serving';

/** True for addresses that mean "every interface". */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** `::1` → `[::1]`, as it appears in a URL or a Host header. */
export function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The host names (without port) a request may address: the bound host, the loopback
 * names, and for a wildcard bind every local interface address. Lowercase.
 */
export function allowedHostNames(boundHost: string, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>(['localhost', '127.0.0.1', '[::1]']);
  names.add(hostForUrl(boundHost).toLowerCase());
  if (isWildcardHost(boundHost)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) names.add(hostForUrl(info.address).toLowerCase());
    }
  }
  for (const name of extra) names.add(hostForUrl(name).toLowerCase());
  return names;
}

export interface OriginPolicy {
  /** Host names accepted in Host and Origin (see {@link allowedHostNames}). */
  hostNames: Set<string>;
  /** The port the server actually listens on. */
  port: number;
  /** Further origins to accept, exactly (e.g. a renderer dev server "http://localhost:5173"). */
  extraOrigins: Set<string>;
}

/**
 * Checks the Host header: it must name an allowed host with the server's port.
 * Returns the refusal, or null when fine. 421 Misdirected Request: the request was
 * meant for another server (a rebound DNS name).
 */
export function checkHost(hostHeader: string | undefined, policy: OriginPolicy): ApiError | null {
  if (!hostHeader) return rejected(421, 'host_not_allowed', 'the Host header is missing');
  const host = hostHeader.toLowerCase();
  const match = /^(\[[0-9a-f:.]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  const name = match?.[1];
  const port = match?.[2] != null ? Number(match[2]) : 80;
  if (name == null || !policy.hostNames.has(name) || port !== policy.port) {
    return rejected(
      421,
      'host_not_allowed',
      `requests must address this server as localhost:${policy.port} or 127.0.0.1:${policy.port}; the Host header names another server`,
    );
  }
  return null;
}

/**
 * Checks the Origin header. Clients that are not browsers send none and pass; a browser
 * sends one on every cross-origin request (and on same-origin POSTs), so any Origin
 * other than this server's own, including "null" (sandboxed frames, file://), is refused.
 */
export function checkOrigin(originHeader: string | undefined, policy: OriginPolicy): ApiError | null {
  if (originHeader == null) return null;
  const origin = originHeader.toLowerCase();
  if (policy.extraOrigins.has(origin)) return null;
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    url = null;
  }
  const ok =
    url != null &&
    url.protocol === 'http:' &&
    url.origin === origin &&
    policy.hostNames.has(url.hostname.toLowerCase()) &&
    Number(url.port || '80') === policy.port;
  if (!ok) return rejected(403, 'origin_not_allowed', 'requests from other web pages are refused (the Origin header is not this server)');
  return null;
}

/** Headers on every answer: no sniffing, no embedding, no referrer, no cross-origin reads. */
export function setCommonSecurityHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** Headers of the HTML page: the CSP, and no framing (clickjacking). */
export function setPageSecurityHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}
