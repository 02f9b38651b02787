/**
 * The HTTP bridge's snapshot stream: `GET /api/events` read through fetch (the token
 * travels in a header, never in a URL), each `snapshot` event parsed and handed on, and
 * the connection's state in words: reconnecting with backoff when the stream breaks,
 * "cannot reach" before any snapshot, and no retry for a refused token (it does not fix
 * itself).
 */
import { backoffDelayMs } from '../../../shared/backoff';
import type { ConnectionProblem } from '../../../shared/bridge';
import { parseSnapshotJson, type Snapshot } from '../../../shared/snapshot';
import { lostMessage, tokenFileOf, tokenRefusedMessage, unreachableMessage } from './connection-words';
import { SseParser } from './sse-parser';

export interface SnapshotStreamDeps {
  fetch: typeof fetch;
  origin: string;
  url(path: string): string;
  headers(extra: Record<string, string>): Record<string, string>;
  /** A failed answer as an error in words (the bridge's). */
  failure(response: Response): Promise<Error>;
  backoff: { initialMs: number; maxMs: number };
  onSnapshot(snapshot: Snapshot): void;
  setConnection(error: string | null, problem?: ConnectionProblem): void;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Reads one connection of the event stream until it ends; throws on failure. */
async function readStream(deps: SnapshotStreamDeps, signal: AbortSignal, onSnapshot: () => void): Promise<{ refused: Response } | 'ended'> {
  const response = await deps.fetch(deps.url('/api/events'), {
    headers: deps.headers({ Accept: 'text/event-stream' }),
    cache: 'no-store',
    signal,
  });
  if (response.status === 401 || response.status === 403) return { refused: response };
  if (!response.ok || !response.body) throw await deps.failure(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return 'ended';
    for (const event of parser.push(decoder.decode(value, { stream: true }))) {
      if (event.event !== 'message' && event.event !== 'snapshot') continue;
      const snapshot = parseSnapshotJson(event.data);
      deps.setConnection(null);
      onSnapshot();
      deps.onSnapshot(snapshot);
    }
  }
}

/** Reads the stream, reconnecting with backoff, until `controller` aborts or the token is refused. */
export async function runSnapshotStream(deps: SnapshotStreamDeps, controller: AbortController): Promise<void> {
  const { signal } = controller;
  const { origin, backoff } = deps;
  let attempt = 0;
  let everConnected = false;
  while (!signal.aborted) {
    let reason: string;
    let reached = false;
    try {
      const outcome = await readStream(deps, signal, () => {
        attempt = 0;
        everConnected = true;
      });
      reached = true;
      if (outcome !== 'ended') {
        // A wrong token does not fix itself: stop retrying and say what to do.
        deps.setConnection(tokenRefusedMessage(origin, await tokenFileOf(outcome.refused)), 'token_refused');
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
    deps.setConnection(everConnected || reached ? lostMessage(origin, reason, seconds) : unreachableMessage(origin, reason), 'unreachable');
    await sleep(delay, signal);
  }
}
