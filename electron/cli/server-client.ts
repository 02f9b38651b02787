/**
 * How every `exobar` command (status, diagnostics, check) finds the exobar server of a
 * data directory and talks to it: through that directory's own record
 * (`<dataDir>/server.json`, core/server-record.ts) and nothing else, so a command never
 * mistakes whatever listens on the default port for its data directory's server; with
 * the control token from $EXOBAR_TOKEN or the token file the record names, and words
 * that say which one a refusal was about. One module, so each command finds the same
 * server the same way. The requests go through the page's own typed client
 * (shared/action-client.ts), so an action's request and answer are written once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createActionClient, jsonBodyOf, type ActionClient, type HttpMethod } from '../../shared/action-client';
import { TOKEN_FILE_NAME } from '../core/auth-token';
import { readServerRecord, SERVER_RECORD_FILE_NAME } from '../core/server-record';

/** Where a token came from, in a refusal's words. */
export const TOKEN_FROM_ENV = 'EXOBAR_TOKEN (the environment)';

export interface ExobarServer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** The server's pid from its record; null for an address given with --url. */
  pid: number | null;
  /** Which server this is, in words: "the server recorded in D/server.json (pid N)" or "--url URL". */
  source: string;
  /** The control token; null when there is none to send. */
  token: string | null;
  /** Where the token came from ({@link TOKEN_FROM_ENV} or the token file's path), or where it was looked for. */
  tokenFrom: string;
}

export type ServerLookup = { found: true; server: ExobarServer } | { found: false; reason: string };

async function readToken(path: string): Promise<string | null> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return text === '' ? null : text;
  } catch {
    return null;
  }
}

/**
 * The server to talk to: the one given with --url, else the one `dataDir`'s own record
 * names while its process runs. No record, a malformed one or one whose process is gone
 * means no server runs for this data directory (`found: false`, with the reason): no
 * port is guessed.
 */
export async function findServer(dataDir: string, explicitUrl: string | null, env: NodeJS.ProcessEnv): Promise<ServerLookup> {
  let url: string;
  let pid: number | null = null;
  let source: string;
  let tokenPath = join(dataDir, TOKEN_FILE_NAME);
  if (explicitUrl) {
    url = explicitUrl;
    source = `--url ${explicitUrl}`;
  } else {
    const recorded = await readServerRecord(dataDir);
    if (!recorded.found) return { found: false, reason: recorded.reason };
    ({ url, pid } = recorded.record);
    source = `the server recorded in ${join(dataDir, SERVER_RECORD_FILE_NAME)} (pid ${pid})`;
    // null: the server took its token from its own environment; the file may hold another.
    tokenPath = recorded.record.tokenPath ?? tokenPath;
  }
  const fromEnv = env.EXOBAR_TOKEN && env.EXOBAR_TOKEN !== '' ? env.EXOBAR_TOKEN : null;
  const token = fromEnv ?? (await readToken(tokenPath));
  return { found: true, server: { url, pid, source, token, tokenFrom: fromEnv ? TOKEN_FROM_ENV : tokenPath } };
}

/** Why no token is sent, in words. */
export function noTokenMessage(server: ExobarServer): string {
  return `no control token for exobar at ${server.url} (set EXOBAR_TOKEN or check ${server.tokenFrom})`;
}

/** The words for a refused token: which token (the environment's or the file's). */
export function tokenRefusedMessage(server: ExobarServer): string {
  return `exobar at ${server.url} refused the token from ${server.tokenFrom}`;
}

export type ServerReply =
  | { answered: true; status: number; body: unknown }
  | { answered: false; message: string };

/** Nothing answered at the server's address (nothing listens, no reply in time). */
export class ServerUnreachableError extends Error {
  override name = 'ServerUnreachableError';
}

/** How long a command waits for one answer unless it says otherwise. */
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * The typed client of `server`: its actions (`call('getCheck', id)`) with the server's
 * token; a refusal throws an Error in {@link refusalMessage}'s words, no answer a
 * {@link ServerUnreachableError}.
 */
export function serverClient(server: ExobarServer, timeoutMs = DEFAULT_TIMEOUT_MS): ActionClient {
  return createActionClient({
    baseUrl: server.url,
    token: server.token,
    timeoutMs,
    refused: async (response) => new Error(refusalMessage(server, { status: response.status, body: await jsonBodyOf(response) })),
    unreachable: (error) => {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      return new ServerUnreachableError(`exobar is not answering at ${server.url} (${server.source}): ${cause}`);
    },
  });
}

/**
 * One control-API request with the server's token; the reply's JSON body (null when it
 * has none), or why nothing answered (nothing listens, no reply in time).
 */
export async function askServer(
  server: ExobarServer,
  method: HttpMethod,
  path: string,
  options: { body?: unknown; timeoutMs?: number } = {},
): Promise<ServerReply> {
  try {
    const response = await serverClient(server).request(method, path, options.body, { timeoutMs: options.timeoutMs });
    return { answered: true, status: response.status, body: (await jsonBodyOf(response)) ?? null };
  } catch (error) {
    if (error instanceof ServerUnreachableError) return { answered: false, message: error.message };
    throw error;
  }
}

/** A reply that is not a success, in words: a refused token names its source; else the server's own message. */
export function refusalMessage(server: ExobarServer, reply: { status: number; body: unknown }): string {
  if (reply.status === 401) return tokenRefusedMessage(server);
  const message = (reply.body as { error?: { message?: unknown } } | null)?.error?.message;
  return `exobar at ${server.url} answered ${reply.status}${typeof message === 'string' ? `: ${message}` : ''}`;
}
