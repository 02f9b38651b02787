/**
 * Faults the fake exo can answer with instead of the real thing, each one a way a
 * real node (or what sits between it and exobar) misbehaves.
 */
import type { ServerResponse } from 'node:http';

export type FaultKind =
  /** Headers never come: the request hangs until the client gives up. */
  | 'hang'
  /** exo's HTTPException shape with status 500. */
  | 'status500'
  /** 200 with an HTML page (a proxy or captive portal in the way). */
  | 'notJson'
  /** 200 with a 50 MB JSON body and its content-length. */
  | 'huge'
  /** The same 50 MB, chunked: no length to judge it by before reading. */
  | 'hugeChunked'
  /** 200 with JSON nested 100 000 levels deep. */
  | 'deepNesting'
  /** The socket is destroyed before any answer. */
  | 'reset';

export interface Fault {
  kind: FaultKind;
  /** Applies to request paths starting with this (all paths when absent). */
  path?: string;
  /** How many requests it still applies to (Infinity when absent). */
  remaining: number;
}

export const HUGE_BODY_BYTES = 50 * 1024 * 1024;
const DEEP_LEVELS = 100_000;

/** Answers `res` with the fault. Returns false for `hang` (the response stays open). */
export function answerWithFault(kind: FaultKind, res: ServerResponse): boolean {
  switch (kind) {
    case 'hang':
      return false;
    case 'reset':
      res.socket?.destroy();
      return true;
    case 'status500':
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Internal Server Error', type: 'Internal Server Error', param: null, code: 500 } }));
      return true;
    case 'notJson':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body><h1>Captive portal</h1></body></html>');
      return true;
    case 'deepNesting':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"deep":${'['.repeat(DEEP_LEVELS)}${']'.repeat(DEEP_LEVELS)}}`);
      return true;
    case 'huge':
    case 'hugeChunked':
      streamHugeBody(res, kind === 'huge');
      return true;
  }
}

function streamHugeBody(res: ServerResponse, withLength: boolean): void {
  res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': String(HUGE_BODY_BYTES) } : {}) });
  const head = '{"pad":"';
  const tail = '"}';
  const chunk = 'x'.repeat(1024 * 1024);
  let left = HUGE_BODY_BYTES - head.length - tail.length;
  res.write(head);
  const pump = () => {
    while (left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.slice(0, left);
      left -= piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(tail);
  };
  res.on('error', () => undefined);
  pump();
}
