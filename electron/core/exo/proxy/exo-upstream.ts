/**
 * Requests from exobar to an exo node's API for the proxy: one keep-alive agent per
 * node with Nagle off (a stream's small chunks must not wait), bodies sent as given,
 * answers handed over as streams so nothing is buffered on the way.
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';

const agents = new Map<string, Agent>();

function agentFor(origin: string): Agent {
  let agent = agents.get(origin);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: 256 });
    agents.set(origin, agent);
  }
  return agent;
}

export interface UpstreamCall {
  req: ClientRequest;
  /** The answer's head; rejects when the node could not be reached or the socket failed first. */
  response: Promise<IncomingMessage>;
}

/** Sends `method path` to the exo node at `base` (its API's URL) with an optional JSON body. */
export function callExo(base: string, method: string, path: string, body?: Buffer | string, headers: Record<string, string> = {}): UpstreamCall {
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const req = request(url, {
    method,
    agent: agentFor(url.origin),
    headers: {
      accept: '*/*',
      ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
      ...headers,
    },
  });
  req.on('socket', (socket) => socket.setNoDelay(true));
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  // A rejection nobody awaits (the client went away first) must not crash the process.
  response.catch(() => undefined);
  req.end(payload);
  return { req, response };
}

/** Reads an answer's body whole, up to `limit` bytes (the rest is dropped). */
export function readAll(res: IncomingMessage, limit = 4 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('the exo node closed the connection before the answer ended')));
  });
}

/** Headers not to pass on between connections (RFC 9110 §7.6.1), plus the length a proxy recomputes. */
export const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'content-length']);

/** exo's answer headers to pass on to the client: all but the hop-by-hop ones. */
export function passHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(res.headers)) {
    if (value === undefined || HOP_BY_HOP.has(key)) continue;
    out[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
