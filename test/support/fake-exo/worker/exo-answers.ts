/** The fake exo's JSON answers: a body, and exo's HTTPException shape (exo 0.3.70, src/exo/api/main.py). */
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export const exoError = (status: number, phrase: string, message: string) => ({ error: { message, type: phrase, param: null, code: status } });
