/**
 * One GET of exo's JSON API with every guard attach mode needs: a keep-alive agent,
 * a timeout per request, a cap on the body size, a cap on JSON nesting, and a
 * classified error for everything that can go wrong (never a throw).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export type ExoFetchErrorKind =
  /** Nothing listens at the address (ECONNREFUSED). */
  | 'refused'
  /** The host cannot be reached or the connection broke (EHOSTUNREACH, ECONNRESET, DNS, ...). */
  | 'unreachable'
  /** No complete answer within the timeout. */
  | 'timeout'
  /** An HTTP status other than 200. */
  | 'http_status'
  | 'not_json'
  | 'too_large'
  | 'too_deep';

export interface ExoFetchError {
  kind: ExoFetchErrorKind;
  /** One line for people: "GET /state/tasks: timed out after 2000 ms". */
  message: string;
  status?: number;
}

export type ExoFetchResult = { ok: true; value: unknown; bytes: number } | { ok: false; error: ExoFetchError };

/**
 * A GET that may answer "the same bytes as last time": `unchanged` with no value, or
 * the parsed value with the body it came from (to pass as `previous` next time).
 */
export type ExoFetchIfChangedResult =
  | { ok: true; unchanged: true; bytes: number }
  | { ok: true; unchanged: false; value: unknown; bytes: number; body: Buffer }
  | { ok: false; error: ExoFetchError };

export interface ExoHttpOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Deepest JSON nesting accepted (exo's State is about 14 levels deep). */
  maxDepth: number;
}

export const DEFAULT_EXO_HTTP: ExoHttpOptions = { timeoutMs: 2_000, maxBytes: 8 * 1024 * 1024, maxDepth: 64 };

/** A keep-alive agent for one exo address: the poller reuses its sockets. */
export function exoAgent(url: URL): HttpAgent {
  const options = { keepAlive: true, maxSockets: 8, maxFreeSockets: 8, keepAliveMsecs: 1_000 };
  return url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

/**
 * Deepest nesting of a JSON text, or `limit + 1` as soon as it is exceeded. Strings
 * are skipped whole, so brackets inside them do not count.
 */
export function jsonDepthExceeds(body: Buffer, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x22) {
      for (;;) {
        i = body.indexOf(0x22, i + 1);
        if (i < 0) return false;
        let slashes = 0;
        for (let j = i - 1; body[j] === 0x5c; j--) slashes++;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function classifySocketError(error: NodeJS.ErrnoException): ExoFetchErrorKind {
  return error.code === 'ECONNREFUSED' ? 'refused' : 'unreachable';
}

/** exo's error body `{"error":{"message"}}` or FastAPI's `{"detail"}`, for the message. */
function errorDetail(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown }; detail?: unknown };
    const message = parsed.error?.message ?? parsed.detail;
    return typeof message === 'string' ? `: ${message.slice(0, 200)}` : '';
  } catch {
    return '';
  }
}

/** GETs `path` from exo at `base` and parses the JSON, within the limits. Never throws. */
export async function getExoJson(base: URL, path: string, agent: HttpAgent, options: ExoHttpOptions = DEFAULT_EXO_HTTP): Promise<ExoFetchResult> {
  const result = await getExoJsonIfChanged(base, path, agent, options, null);
  return result.ok && !result.unchanged ? { ok: true, value: result.value, bytes: result.bytes } : (result as ExoFetchResult);
}

/**
 * Like getExoJson, but when the body is byte for byte `previous` (exo's state between
 * two polls mostly is) it answers `unchanged` without joining, scanning or parsing it:
 * the poller's cost then hardly depends on the size of exo's state. The chunks are
 * compared as they arrive, so an unchanged answer allocates nothing more.
 */
export function getExoJsonIfChanged(
  base: URL,
  path: string,
  agent: HttpAgent,
  options: ExoHttpOptions,
  previous: Buffer | null,
): Promise<ExoFetchIfChangedResult> {
  const url = new URL(path, base);
  const label = `GET ${url.pathname}`;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ExoFetchIfChangedResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const fail = (kind: ExoFetchErrorKind, message: string, status?: number) =>
      finish({ ok: false, error: { kind, message: `${label}: ${message}`, ...(status === undefined ? {} : { status }) } });
    const req = request(url, { method: 'GET', agent, headers: { accept: 'application/json' } }, (res: IncomingMessage) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        res.destroy();
        return fail('too_large', `answer of ${declared} bytes is over the ${options.maxBytes}-byte cap`);
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      let same = previous !== null && res.statusCode === 200;
      res.on('data', (chunk: Buffer) => {
        if (same) same = previous!.length >= bytes + chunk.length && previous!.compare(chunk, 0, chunk.length, bytes, bytes + chunk.length) === 0;
        bytes += chunk.length;
        if (bytes > options.maxBytes) {
          res.destroy();
          fail('too_large', `answer is over the ${options.maxBytes}-byte cap`);
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (error) => fail(classifySocketError(error), error.message));
      res.on('end', () => {
        if (same && bytes === previous!.length) return finish({ ok: true, unchanged: true, bytes });
        const body = Buffer.concat(chunks);
        if (res.statusCode !== 200) return fail('http_status', `HTTP ${res.statusCode}${errorDetail(body)}`, res.statusCode);
        if (jsonDepthExceeds(body, options.maxDepth)) return fail('too_deep', `JSON nested deeper than ${options.maxDepth} levels`);
        let value: unknown;
        try {
          value = JSON.parse(body.toString('utf8'));
        } catch {
          return fail('not_json', `answer is not JSON (${String(res.headers['content-type'] ?? 'no content type')})`);
        }
        finish({ ok: true, unchanged: false, value, bytes, body });
      });
    });
    const timer = setTimeout(() => {
      fail('timeout', `timed out after ${options.timeoutMs} ms`);
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => fail(classifySocketError(error), error.code ?? error.message));
    req.end();
  });
}
