/**
 * Live logs: `GET /api/logs` lists the sources; `GET /api/logs/{source}?lines=N` answers
 * the last N lines as JSON, and with `follow=1` streams them as server-sent events: the
 * last N lines first, then each new line as it is written (log-follow.ts: a line shows
 * within 200 ms; a rotated file is read from its start again).
 */
import { z } from 'zod';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import { SseStream } from '../api/sse-stream';
import { followFile, readTail } from './log-follow';
import { listLogSources, type LogSourceOptions } from './log-sources';

const QuerySchema = z.strictObject({
  follow: z.enum(['0', '1', 'true', 'false']).optional(),
  lines: z.string().regex(/^\d+$/, 'expected a whole number of lines').transform(Number).pipe(z.number().int().min(0).max(10_000)).default(200),
});

async function readLog(ctx: RouteContext, dataDir: string, options: LogSourceOptions): Promise<void> {
  const q = QuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!q.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(q.error)}`);
  const sources = await listLogSources(dataDir, ctx.node.snapshot(), options);
  const source = sources.find((s) => s.id === ctx.params.source);
  if (!source) {
    throw rejected(404, 'log_not_found', `no log "${ctx.params.source}"; GET /api/logs lists them: ${sources.map((s) => s.id).join(', ') || 'none yet'}`);
  }
  const { lines, offset } = await readTail(source.path, q.data.lines);
  if (q.data.follow !== '1' && q.data.follow !== 'true') {
    ctx.json(200, { source: source.id, title: source.title, lines });
    return;
  }
  const sse = new SseStream(ctx.res);
  sse.open();
  sse.event('source', { id: source.id, title: source.title });
  for (const line of lines) sse.data({ line });
  const stop = followFile(source.path, offset, (added) => {
    for (const line of added) sse.data({ line });
  });
  const untrack = ctx.trackStream(() => sse.end());
  ctx.res.on('close', () => {
    stop();
    untrack();
  });
}

/** The log routes, behind the bearer token (logs can hold paths and model names). */
export function logRoutes(options: { dataDir: string } & LogSourceOptions): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/logs',
      auth: true,
      handle: async (ctx) => {
        const sources = await listLogSources(options.dataDir, ctx.node.snapshot(), options);
        ctx.json(200, { sources: sources.map(({ path: _path, ...s }) => s) });
      },
    },
    { method: 'GET', path: '/api/logs/:source', auth: true, handle: (ctx) => readLog(ctx, options.dataDir, options) },
  ];
}
