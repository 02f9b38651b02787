/**
 * Following a log from the page served by `exobar serve`: `GET /api/logs/{source}?follow=1&lines=N`
 * read through fetch (the token travels in a header, never in a URL), its `source` event
 * then one `data: {"line": …}` per line. Lines that arrive together are handed on as one
 * batch, so a burst of thousands costs the page one update, not thousands.
 */
import type { LogStreamEvent } from '../../../shared/logs';
import { SseParser } from './sse-parser';

export interface HttpLogFollowDeps {
  fetch: typeof fetch;
  /** The absolute URL of an API path. */
  url(path: string): string;
  headers(extra: Record<string, string>): Record<string, string>;
  /** A failed answer as an error in words (the bridge's). */
  failure(response: Response): Promise<Error>;
}

/** Starts following; the returned function stops (and ends the request). */
export function followLogOverHttp(deps: HttpLogFollowDeps, source: string, lines: number, listener: (event: LogStreamEvent) => void): () => void {
  const controller = new AbortController();
  const run = async (): Promise<string> => {
    const path = `/api/logs/${encodeURIComponent(source)}?follow=1&lines=${lines}`;
    const response = await deps.fetch(deps.url(path), { headers: deps.headers({ Accept: 'text/event-stream' }), cache: 'no-store', signal: controller.signal });
    if (!response.ok || !response.body) throw await deps.failure(response);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'the server closed the log stream';
      const batch: string[] = [];
      for (const event of parser.push(decoder.decode(value, { stream: true }))) {
        if (event.event === 'source') {
          const info = JSON.parse(event.data) as { id?: unknown; title?: unknown };
          listener({ kind: 'source', id: String(info.id ?? source), title: String(info.title ?? source) });
        } else if (event.event === 'message') {
          const data = JSON.parse(event.data) as { line?: unknown };
          if (typeof data.line === 'string') batch.push(data.line);
        }
      }
      if (batch.length > 0) listener({ kind: 'lines', lines: batch });
    }
  };
  run().then(
    (reason) => {
      if (!controller.signal.aborted) listener({ kind: 'ended', message: reason });
    },
    (error: unknown) => {
      if (!controller.signal.aborted) listener({ kind: 'ended', message: error instanceof Error ? error.message : String(error) });
    },
  );
  return () => controller.abort();
}
