/**
 * The window's security rules (Electron's security checklist): the app's page comes
 * from our own `app://exobar` protocol, never from the network; a strict
 * Content-Security-Policy on every response (the page's one, shared/page-serving.ts); no permissions; no navigation away and
 * no new windows (http(s) links open in the user's browser instead).
 */
import type { Session, Shell, WebContents } from 'electron';
import { PAGE_CSP } from '../../shared/page-serving';

export const APP_SCHEME = 'app';
export const APP_HOST = 'exobar';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
/** The page the popover loads. */
export const APP_START_URL = `${APP_ORIGIN}/index.html`;

/** Links the user may follow out of the app, into their browser. */
export function isSafeExternalUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'https:' || parsed.protocol === 'http:') && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

/**
 * Requests the app's sessions may make: its own protocol, inline data images and the
 * developer tools; everything else (any http, ws or file URL) is remote or local
 * content the app does not load.
 */
export function isAllowedRequestUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === `${APP_SCHEME}:`) return parsed.host === APP_HOST;
    return parsed.protocol === 'data:' || parsed.protocol === 'devtools:';
  } catch {
    return false;
  }
}

/** Headers with our CSP set (replacing any the response had, whatever its case). */
export function withCspHeader(headers: Record<string, string[] | string> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name.toLowerCase() === 'content-security-policy') continue;
    out[name] = Array.isArray(value) ? value : [value];
  }
  out['Content-Security-Policy'] = [PAGE_CSP];
  return out;
}

/** Applies the rules to a session: CSP on every response, remote requests blocked, no permissions. */
export function hardenSession(session: Session, onBlocked: (url: string) => void = () => undefined): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withCspHeader(details.responseHeaders) });
  });
  session.webRequest.onBeforeRequest((details, callback) => {
    const allowed = isAllowedRequestUrl(details.url);
    if (!allowed) onBlocked(details.url);
    callback({ cancel: !allowed });
  });
  // Camera, notifications from the page, clipboard, geolocation...: the popover needs none.
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

/**
 * Applies the rules to a webContents: navigation and new windows are denied; an
 * http(s) link asked for is opened in the user's browser; <webview> is refused.
 */
export function hardenWebContents(contents: WebContents, shell: Pick<Shell, 'openExternal'>): void {
  const openOutside = (url: string) => {
    if (isSafeExternalUrl(url)) void shell.openExternal(url);
  };
  contents.setWindowOpenHandler(({ url }) => {
    openOutside(url);
    return { action: 'deny' };
  });
  contents.on('will-navigate', (event, url) => {
    event.preventDefault();
    openOutside(url);
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
}
