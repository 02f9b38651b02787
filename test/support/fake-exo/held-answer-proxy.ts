/**
 * An HTTP proxy in front of an exo (fake or real) that holds the answers to chosen
 * requests for a while before passing them on, for tests of races between two things
 * exo sends: e.g. the end of a cancelled stream and the answer to its cancel.
 */
import { createServer, request, type IncomingMessage } from 'node:http';
import { listenOnLoopback } from '../loopback-server';

export interface HeldAnswerProxy {
  url: string;
  /** Answers held so far. */
  held: number;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1; answers to requests `hold(method, path)` picks wait `holdMs`. */
export async function startHeldAnswerProxy(target: string, hold: (method: string, path: string) => boolean, holdMs: number): Promise<HeldAnswerProxy> {
  const upstream = new URL(target);
  const proxy: HeldAnswerProxy = { url: '', held: 0, close: () => Promise.resolve() };
  const server = createServer((req, res) => {
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer: IncomingMessage) => {
        const pass = () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        };
        if (!hold(req.method ?? 'GET', req.url ?? '/')) return pass();
        proxy.held++;
        answer.pause();
        setTimeout(pass, holdMs);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
    // The client went away: so does the request to exo (exo sees its stream closed).
    res.on('close', () => !res.writableFinished && out.destroy());
  });
  Object.assign(proxy, await listenOnLoopback(server));
  return proxy;
}
