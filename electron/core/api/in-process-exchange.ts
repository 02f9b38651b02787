/**
 * One request to the route table without a socket: a request and a response object
 * that look to a route exactly like Node's (headers, a readable JSON body, writeHead /
 * setHeader / write / end), so main's IPC handler reaches the same routes `exobar serve`
 * answers over HTTP, and gets the same status and body back. Written by hand because
 * the routes only use this small part of http's objects, and a real ServerResponse
 * without a socket cannot be read back.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { HttpMethod } from './route-types';

/** A request dispatched in process; `auth: 'ipc'` says main checked the sender (its own window) already. */
export interface DispatchRequest {
  method: HttpMethod;
  /** Path and query, as the HTTP bridge sends it (`/api/instances/inst-1`). */
  path: string;
  /** The JSON body, if any. */
  body?: unknown;
  auth: 'ipc';
}

/** The route's answer: its status, its JSON body parsed (undefined when empty), its headers. */
export interface DispatchAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** The request and response a route is handed, and the answer once the route ended it. */
export function inProcessExchange(request: DispatchRequest): { req: IncomingMessage; res: ServerResponse; answer: Promise<DispatchAnswer> } {
  const text = request.body === undefined ? null : JSON.stringify(request.body);
  const req = Object.assign(Readable.from(text === null ? [] : [Buffer.from(text)]), {
    method: request.method,
    url: request.path,
    complete: true,
    headers: text === null ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
    socket: { remoteAddress: 'ipc' },
  });
  const res = new CapturedResponse();
  return { req: req as unknown as IncomingMessage, res: res as unknown as ServerResponse, answer: res.answer };
}

class CapturedResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableFinished = false;
  writableLength = 0;
  destroyed = false;
  private readonly headers: Record<string, string> = {};
  private readonly chunks: Buffer[] = [];
  private settle!: (answer: DispatchAnswer) => void;
  readonly answer = new Promise<DispatchAnswer>((resolve) => {
    this.settle = resolve;
  });

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = String(value);
    return this;
  }
  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }
  removeHeader(name: string): void {
    delete this.headers[name.toLowerCase()];
  }
  writeHead(status: number, headers: Record<string, string | number> = {}): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    this.headersSent = true;
    return this;
  }
  flushHeaders(): void {
    this.headersSent = true;
  }
  write(chunk: string | Buffer): boolean {
    this.headersSent = true;
    this.chunks.push(Buffer.from(chunk));
    return true;
  }
  end(chunk?: string | Buffer): this {
    if (this.writableFinished) return this;
    if (chunk !== undefined) this.write(chunk);
    this.headersSent = true;
    this.writableFinished = true;
    this.settle({ status: this.statusCode, body: parseBody(Buffer.concat(this.chunks).toString('utf8'), this.headers['content-type']), headers: this.headers });
    this.emit('finish');
    this.emit('close');
    return this;
  }
  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    // A route that cut its answer off: no body to give back.
    this.settle({ status: this.headersSent ? this.statusCode : 500, body: undefined, headers: this.headers });
    this.emit('close');
    return this;
  }
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (!contentType?.includes('json')) return text;
  return JSON.parse(text) as unknown;
}
