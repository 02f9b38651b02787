/**
 * Live logs: `GET /api/logs` lists the sources; `GET /api/logs/{source}?lines=N` answers
 * the last N lines as JSON, and with `follow=1` streams them as server-sent events: the
 * last N lines first, then each new line as it is written (the file is read every
 * POLL_MS, so a line shows within that; a rotated file is read from its start again).
 */
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import { SseStream } from '../api/sse-stream';
import { readLastBytes } from '../diagnostics/log-tails';
import { listLogSources } from './log-sources';

/** How often a followed file is read for new lines. */
export const POLL_MS = 200;
/** The most of a file's end read for its last lines. */
const TAIL_BYTES = 1024 * 1024;

const QuerySchema = z.strictObject({
  follow: z.enum(['0', '1', 'true', 'false']).optional(),
  lines: z.string().regex(/^\d+$/, 'expected a whole number of lines').transform(Number).pipe(z.number().int().min(0).max(10_000)).default(200),
});

/** The last `count` complete lines of `text`. */
export function lastLines(text: string, count: number): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return count === 0 ? [] : lines.slice(-count);
}

/** Sends each line added to `path` after byte `startAt` until the client goes away. */
function follow(ctx: RouteContext, sse: SseStream, path: string, startAt: number): void {
  let offset = startAt;
  let partial = '';
  let reading = false;
  const timer = setInterval(() => {
    if (reading || sse.isClosed) return;
    reading = true;
    void (async () => {
      try {
        const handle = await open(path, 'r');
        try {
          const { size } = await handle.stat();
          if (size < offset) {
            offset = 0; // rotated or truncated: its new content from the start
            partial = '';
          }
          if (size > offset) {
            const buffer = Buffer.alloc(size - offset);
            await handle.read(buffer, 0, buffer.length, offset);
            offset = size;
            const text = partial + buffer.toString('utf8');
            const parts = text.split('\n');
            partial = parts.pop() ?? '';
            for (const line of parts) sse.data({ line });
          }
        } finally {
          await handle.close();
        }
      } catch {
        // The file went away (its instance was deleted): keep the stream, it may come back.
      } finally {
        reading = false;
      }
    })();
  }, POLL_MS);
  const untrack = ctx.trackStream(() => sse.end());
  ctx.res.on('close', () => {
    clearInterval(timer);
    untrack();
  });
}

async function readLog(ctx: RouteContext, dataDir: string): Promise<void> {
  const q = QuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!q.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(q.error)}`);
  const sources = await listLogSources(dataDir, ctx.node.snapshot());
  const source = sources.find((s) => s.id === ctx.params.source);
  if (!source) {
    throw rejected(404, 'log_not_found', `no log "${ctx.params.source}"; GET /api/logs lists them: ${sources.map((s) => s.id).join(', ') || 'none yet'}`);
  }
  const tail = await readLastBytes(source.path, TAIL_BYTES);
  const text = tail ? tail.data.toString('utf8') : '';
  // A cut tail starts mid-line: that first piece is not a line.
  const complete = tail && tail.size > tail.data.length ? text.slice(text.indexOf('\n') + 1) : text;
  // A last line still being written is not a line yet: following sends it once it ends.
  const unfinished = complete.endsWith('\n') ? '' : complete.slice(complete.lastIndexOf('\n') + 1);
  const lines = lastLines(complete.slice(0, complete.length - unfinished.length), q.data.lines);
  if (q.data.follow !== '1' && q.data.follow !== 'true') {
    ctx.json(200, { source: source.id, title: source.title, lines });
    return;
  }
  const sse = new SseStream(ctx.res);
  sse.open();
  sse.event('source', { id: source.id, title: source.title });
  for (const line of lines) sse.data({ line });
  follow(ctx, sse, source.path, (tail?.size ?? 0) - Buffer.byteLength(unfinished));
}

/** The log routes, behind the bearer token (logs can hold paths and model names). */
export function logRoutes(options: { dataDir: string }): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/logs',
      auth: true,
      handle: async (ctx) => {
        const sources = await listLogSources(options.dataDir, ctx.node.snapshot());
        ctx.json(200, { sources: sources.map(({ path: _path, ...s }) => s) });
      },
    },
    { method: 'GET', path: '/api/logs/:source', auth: true, handle: (ctx) => readLog(ctx, options.dataDir) },
  ];
}
