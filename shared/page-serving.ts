/**
 * How the built page is served, the same in the Electron popover (`app://exobar`) and
 * in a browser (`exobar serve` at `/`): one Content-Security-Policy and one table of
 * content types, so the two servers of one page cannot drift apart.
 */

/**
 * Only the page's own scripts, styles, images and connections; no frames, no plugins,
 * no forms, no <base>. Style attributes set through the DOM (React's `style` prop, the
 * charts') are not affected; inline <style> and style="" in markup are. The page renders
 * with no violation under it (test/electron/package-files.test.ts counts them).
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "frame-src 'none'",
  "object-src 'none'",
  "worker-src 'none'",
].join('; ');

/** Content types by lower-case file extension (text types with their charset). */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
};

/** The content type of a file by its name; `application/octet-stream` for an unknown extension. */
export function contentTypeOf(file: string): string {
  const name = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = name.lastIndexOf('.');
  return (dot > 0 ? CONTENT_TYPES[name.slice(dot).toLowerCase()] : undefined) ?? 'application/octet-stream';
}
