/**
 * The bridge for a browser talking to `exobar serve`: the control API under /api with
 * a bearer token, snapshots from `GET /api/events` (server-sent events read through
 * fetch so the token travels in a header, never in a URL), cancellation through the
 * OpenAI-style `POST /v1/cancel/{id}`, the MLX runtime under /api/mlx.
 *
 * Assembled from its parts: every action through the one typed client the CLI uses too
 * (shared/action-client.ts), the snapshot stream (snapshot-stream.ts), the failure words
 * (http-failure.ts), the bundle's download (browser-download.ts) and log following
 * (http-log-follow.ts). What stays here is the connection's state and its listeners.
 */
import { createActionClient } from '../../../shared/action-client';
import type { ConnectionProblem, DiagnosticsResult, ExobarBridge, Unsubscribe } from '../../../shared/bridge';
import type { Snapshot } from '../../../shared/snapshot';
import { BridgeError } from './bridge-error';
import { browserSaveFile, fileNameFrom } from './browser-download';
import { noTokenMessage, tokenFileOf, unreachableMessage } from './connection-words';
import { describeFailure, unreachableError } from './http-failure';
import { followLogOverHttp } from './http-log-follow';
import { runSnapshotStream } from './snapshot-stream';

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

type ConnectionListener = (error: string | null, problem?: ConnectionProblem) => void;

/** Creates the HTTP bridge. The event stream opens with the first snapshot subscriber and closes with the last. */
export function createHttpBridge(options: HttpBridgeOptions): ExobarBridge {
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const baseUrl = options.baseUrl ?? window.location.origin;
  const origin = new URL(baseUrl).origin;
  const token = options.token;
  const failure = (response: Response): Promise<BridgeError> => describeFailure(response, origin);
  const client = createActionClient({
    baseUrl,
    token,
    fetch: doFetch,
    refused: failure,
    unreachable: (error) => unreachableError(origin, error),
    // Without a token nothing is sent: each action refuses in words at once.
    missingToken: () => new BridgeError(noTokenMessage(origin, undefined), 'no_token'),
  });

  const snapshotListeners = new Set<(snapshot: Snapshot) => void>();
  const connectionListeners = new Set<ConnectionListener>();
  let latest: Snapshot | null = null;
  let connectionError: string | null = token ? null : noTokenMessage(origin, undefined);
  let connectionProblem: ConnectionProblem | undefined = token ? undefined : 'no_token';
  let stream: AbortController | null = null;
  let probed = false;

  const setConnection: ConnectionListener = (error, problem) => {
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
      const response = await doFetch(client.url('/api/state'), { cache: 'no-store' });
      setConnection(noTokenMessage(origin, response.status === 401 ? await tokenFileOf(response) : undefined), 'no_token');
    } catch (error) {
      setConnection(unreachableMessage(origin, error instanceof Error ? error.message : String(error)), 'unreachable');
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
    const onSnapshot = (snapshot: Snapshot): void => {
      latest = snapshot;
      for (const listener of snapshotListeners) listener(snapshot);
    };
    const backoff = options.backoff ?? { initialMs: 500, maxMs: 10_000 };
    const deps = { fetch: doFetch, origin, url: client.url, headers: client.headers, failure, backoff, onSnapshot, setConnection };
    void runSnapshotStream(deps, controller).finally(() => {
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
    ...client.actions(),
    async exportDiagnostics(): Promise<DiagnosticsResult> {
      const response = await client.send('exportDiagnostics');
      const blob = await response.blob();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const fileName = fileNameFrom(response.headers.get('Content-Disposition')) ?? `exobar-diagnostics-${stamp}.zip`;
      (options.saveFile ?? browserSaveFile)(blob, fileName);
      return { saved: true, location: fileName };
    },
    followLog: (source, lines, listener) => {
      if (!token) {
        listener({ kind: 'ended', message: noTokenMessage(origin, undefined) });
        return () => undefined;
      }
      return followLogOverHttp({ fetch: doFetch, url: client.url, headers: client.headers, failure }, source, lines, listener);
    },
  };
}
