/**
 * The bridge for a browser talking to `exobar serve`: the control API under /api with
 * a bearer token, snapshots from `GET /api/events` (server-sent events read through
 * fetch so the token travels in a header, never in a URL), cancellation through the
 * OpenAI-style `POST /v1/cancel/{id}`, the MLX runtime under /api/mlx.
 */
import { backoffDelayMs } from '../../../shared/backoff';
import type { ConnectionProblem, DiagnosticsResult, ExobarBridge, Unsubscribe } from '../../../shared/bridge';
import { BRIDGE_ACTIONS, type BridgeActionArgs, type BridgeActionName, type BridgeActions } from '../../../shared/bridge-actions';
import { bridgeAnswer, JSON_ACTION_NAMES, type JsonAction } from '../../../shared/bridge-answers';
import { parseSnapshotJson, type Snapshot } from '../../../shared/snapshot';
import { BridgeError } from './bridge-error';
import { lostMessage, noTokenMessage, tokenFileOf, tokenRefusedMessage, unreachableMessage } from './connection-words';

import { followLogOverHttp } from './http-log-follow';
import { SseParser } from './sse-parser';

export interface HttpBridgeOptions {
  /** The server's origin ("http://127.0.0.1:52416"); defaults to the page's own. */
  baseUrl?: string;
  token: string | null;
  fetch?: typeof fetch;
  /** Reconnect delays: the first retry waits `initialMs`, doubling up to `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
  /** Saves a downloaded file (the browser's download by default; tests pass a fake). */
  saveFile?: (blob: Blob, fileName: string) => void;
}

/** Lets the browser save a blob as a file. */
function browserSaveFile(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  document.body.appendChild(link);
  link.click();
  link.remove();
  // Revoke later: revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * An API error answer (`{"error":{"message","code"}}`) as an error the page can act
 * on (its code, and `requests` for `requests_in_flight`), or the status in words.
 */
async function describeFailure(response: Response, origin: string): Promise<BridgeError> {
  if (response.status === 401 || response.status === 403) return new BridgeError(tokenRefusedMessage(origin, await tokenFileOf(response)), 'token_refused');
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown; requests?: unknown } };
    const error = body.error;
    if (typeof error?.message === 'string' && error.message) {
      const requests = typeof error.requests === 'number' ? error.requests : null;
      return new BridgeError(error.message, typeof error.code === 'string' ? error.code : null, requests);
    }
  } catch {
    // not JSON: fall through
  }
  return new BridgeError(`The server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`, null);
}

function fileNameFrom(disposition: string | null): string | null {
  if (!disposition) return null;
  const star = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (star?.[1]) return decodeURIComponent(star[1]);
  const plain = /filename="?([^";]+)"?/i.exec(disposition);
  return plain?.[1] ?? null;
}

/** Creates the HTTP bridge. The event stream opens with the first snapshot subscriber and closes with the last. */
export function createHttpBridge(options: HttpBridgeOptions): ExobarBridge {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const baseUrl = options.baseUrl ?? window.location.origin;
  const origin = new URL(baseUrl).origin;
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 10_000 };
  const saveFile = options.saveFile ?? browserSaveFile;
  const token = options.token;

  const snapshotListeners = new Set<(snapshot: Snapshot) => void>();
  const connectionListeners = new Set<(error: string | null, problem?: ConnectionProblem) => void>();
  let latest: Snapshot | null = null;
  let connectionError: string | null = token ? null : noTokenMessage(origin, undefined);
  let connectionProblem: ConnectionProblem | undefined = token ? undefined : 'no_token';
  let stream: AbortController | null = null;
  let probed = false;

  const url = (path: string): string => new URL(path, baseUrl).toString();
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
    ...extra,
  });

  const setConnection = (error: string | null, problem?: ConnectionProblem): void => {
    if (error === connectionError && problem === connectionProblem) return;
    connectionError = error;
    connectionProblem = error === null ? undefined : problem;
    for (const listener of connectionListeners) listener(error, connectionProblem);
  };

  /**
   * Without a token the page asks the server once, unauthenticated, so it can say
   * whether anything answers and where the token is (the 401 names the token file).
   */
  const probeWithoutToken = async (): Promise<void> => {
    try {
      const response = await doFetch(url('/api/state'), { cache: 'no-store' });
      setConnection(noTokenMessage(origin, response.status === 401 ? await tokenFileOf(response) : undefined), 'no_token');
    } catch (error) {
      setConnection(unreachableMessage(origin, error instanceof Error ? error.message : String(error)), 'unreachable');
    }
  };

  const request = async (method: string, path: string, body?: unknown): Promise<Response> => {
    if (!token) throw new BridgeError(noTokenMessage(origin, undefined), 'no_token');
    let response: Response;
    try {
      response = await doFetch(url(path), {
        method,
        headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
      });
    } catch (error) {
      throw new BridgeError(unreachableMessage(origin, error instanceof Error ? error.message : String(error)), 'unreachable');
    }
    if (!response.ok) throw await describeFailure(response, origin);
    return response;
  };

  /** One action's HTTP request, method, path and body from the action table. */
  const send = <K extends BridgeActionName>(name: K, ...args: BridgeActionArgs<K>): Promise<Response> => {
    const route = BRIDGE_ACTIONS[name];
    return request(route.http.method, route.http.path(...args), route.http.body?.(...args));
  };
  const bodyOf = async <T>(response: Response): Promise<T> => {
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  };
  const nothing = (): void => undefined;
  /** Every JSON action of the table: its request from the table, its value from the shared decoder (as main's IPC handler reads it). */
  const actionsOverHttp = Object.fromEntries(
    JSON_ACTION_NAMES.map((name) => [
      name,
      async (...args: unknown[]) => bridgeAnswer(name, await send(name, ...(args as BridgeActionArgs<typeof name>)).then(bodyOf<unknown>)),
    ]),
  ) as Pick<BridgeActions, JsonAction>;

  const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  /** Reads one connection of the event stream until it ends; throws on failure. */
  const readStream = async (signal: AbortSignal, onSnapshot: () => void): Promise<{ refused: Response } | 'ended'> => {
    const response = await doFetch(url('/api/events'), {
      headers: headers({ Accept: 'text/event-stream' }),
      cache: 'no-store',
      signal,
    });
    if (response.status === 401 || response.status === 403) return { refused: response };
    if (!response.ok || !response.body) throw await describeFailure(response, origin);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        if (event.event !== 'message' && event.event !== 'snapshot') continue;
        latest = parseSnapshotJson(event.data);
        setConnection(null);
        onSnapshot();
        for (const listener of snapshotListeners) listener(latest);
      }
    }
  };

  const runStream = async (controller: AbortController): Promise<void> => {
    const { signal } = controller;
    let attempt = 0;
    let everConnected = false;
    while (!signal.aborted) {
      let reason: string;
      let reached = false;
      try {
        const outcome = await readStream(signal, () => {
          attempt = 0;
          everConnected = true;
        });
        reached = true;
        if (outcome !== 'ended') {
          // A wrong token does not fix itself: stop retrying and say what to do.
          setConnection(tokenRefusedMessage(origin, await tokenFileOf(outcome.refused)), 'token_refused');
          return;
        }
        reason = 'the server closed the event stream';
      } catch (error) {
        if (signal.aborted) return;
        reason = error instanceof Error ? error.message : String(error);
      }
      const delay = backoffDelayMs(attempt + 1, { baseDelayMs: backoff.initialMs, maxDelayMs: backoff.maxMs });
      attempt += 1;
      const seconds = Math.max(1, Math.round(delay / 1000));
      // Before any snapshot and with nothing answering: "cannot reach", not "lost".
      setConnection(everConnected || reached ? lostMessage(origin, reason, seconds) : unreachableMessage(origin, reason), 'unreachable');
      await sleep(delay, signal);
    }
  };

  const openStream = (): void => {
    if (!token) {
      if (!probed) void probeWithoutToken();
      probed = true;
      return;
    }
    if (stream) return;
    const controller = new AbortController();
    stream = controller;
    void runStream(controller).finally(() => {
      if (stream === controller) stream = null;
    });
  };

  const closeStream = (): void => {
    stream?.abort();
    stream = null;
  };

  return {
    subscribeSnapshots(listener): Unsubscribe {
      snapshotListeners.add(listener);
      if (latest) listener(latest);
      openStream();
      return () => {
        snapshotListeners.delete(listener);
        if (snapshotListeners.size === 0) closeStream();
      };
    },
    subscribeConnection(listener): Unsubscribe {
      connectionListeners.add(listener);
      if (connectionError) listener(connectionError, connectionProblem);
      return () => connectionListeners.delete(listener);
    },
    ...actionsOverHttp,
    async exportDiagnostics(): Promise<DiagnosticsResult> {
      const response = await send('exportDiagnostics');
      const blob = await response.blob();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const fileName = fileNameFrom(response.headers.get('Content-Disposition')) ?? `exobar-diagnostics-${stamp}.zip`;
      saveFile(blob, fileName);
      return { saved: true, location: fileName };
    },
    followLog: (source, lines, listener) => {
      if (!token) {
        listener({ kind: 'ended', message: noTokenMessage(origin, undefined) });
        return nothing;
      }
      return followLogOverHttp({ fetch: doFetch, url, headers, failure: (response) => describeFailure(response, origin) }, source, lines, listener);
    },
  };
}
