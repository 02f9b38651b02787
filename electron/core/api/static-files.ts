/**
 * Serves the built renderer (out/renderer) at `/` for `exobar serve` in a browser:
 * static files with their content types, index.html for app paths, and a short page
 * that says how to build it when it is missing.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { packageRoot } from '../package-root';
import { contentTypeOf } from '../../../shared/page-serving';
import { setPageSecurityHeaders } from './http-security';

/** The renderer build beside the package: `<package root>/out/renderer`. */
export function defaultRendererDir(): string {
  return join(packageRoot(), 'out', 'renderer');
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>exobar</title>
<style>body{font:14px -apple-system,system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}code{background:#8882;padding:.1em .3em;border-radius:3px}</style>
</head><body><h1>exobar</h1>
<p>The API is running, but the page is not built yet. Build it with</p>
<p><code>npm run build:renderer</code></p>
<p>then reload this page. The OpenAI-compatible API is at <code>/v1</code>; see docs/api.md.</p>
</body></html>
`;

/**
 * Answers a GET/HEAD for a non-API path from `rootDir`. Paths are resolved inside the
 * root only (no `..` escape); paths without a file extension get index.html so the
 * app's own routes load; a missing build gets a page saying how to build it.
 */
export async function serveStatic(req: IncomingMessage, res: ServerResponse, pathname: string, rootDir: string | null): Promise<void> {
  const head = req.method === 'HEAD';
  const root = rootDir == null ? null : resolve(rootDir);
  const index = root == null ? null : join(root, 'index.html');
  if (root == null || index == null || !(await isFile(index))) {
    sendPage(res, 200, NOT_BUILT_PAGE, head);
    return;
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    sendPage(res, 400, 'bad path', head, 'text/plain; charset=utf-8');
    return;
  }
  const candidate = resolve(root, `.${decoded.includes('\0') ? '/' : decoded}`);
  const inside = candidate === root || candidate.startsWith(root + sep);
  let file = inside && (await isFile(candidate)) ? candidate : null;
  if (file == null) {
    // A missing asset is a 404; an app path (no extension) is the single-page app.
    if (extname(decoded) !== '' || !inside) {
      sendPage(res, 404, 'not found', head, 'text/plain; charset=utf-8');
      return;
    }
    file = index;
  }
  const ext = extname(file).toLowerCase();
  const type = contentTypeOf(file);
  const info = await stat(file);
  if (ext === '.html') setPageSecurityHeaders(res);
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': info.size,
    // Vite puts content hashes in asset names: those never change; the page must not be cached.
    'Cache-Control': decoded.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (head) {
    res.end();
    return;
  }
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function sendPage(res: ServerResponse, status: number, body: string, head: boolean, type = 'text/html; charset=utf-8'): void {
  setPageSecurityHeaders(res);
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache' });
  res.end(head ? undefined : body);
}
