/**
 * An HTTP proxy in front of an exo (fake or real) that passes everything on unchanged
 * and keeps what went through: each request's method, path and body as exo received
 * them, and the answer's bytes as exo sent them. Tests assert on what exobar really
 * sends to exo and on what exo really answered.
 */
import { createServer, request, type IncomingMessage } from 'node:http';
import { listenOnLoopback } from '../loopback-server';

export interface RecordedExchange {
  method: string;
  path: string;
  /** The request body as exo got it. */
  body: Buffer;
  /** exo's answer as it sent it (complete once `ended`). */
  answer: Buffer[];
  ended: boolean;
}

export interface RecordingProxy {
  url: string;
  exchanges: RecordedExchange[];
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const exchanges: RecordedExchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const exchange: RecordedExchange = { method: req.method ?? 'GET', path: req.url ?? '/', body: Buffer.concat(chunks), answer: [], ended: false };
      exchanges.push(exchange);
      const out = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer: IncomingMessage) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (c: Buffer) => {
            exchange.answer.push(c);
            res.write(c);
          });
          answer.on('end', () => {
            exchange.ended = true;
            res.end();
          });
          answer.on('error', () => res.destroy());
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => !res.writableFinished && out.destroy());
      out.end(exchange.body);
    });
  });
  return { ...(await listenOnLoopback(server)), exchanges };
}
