/**
 * The request log's endpoints, behind the bearer token:
 * `GET /api/requests?model=&source=&outcome=&since=&limit=` (JSON, newest first) and
 * `GET /api/requests.csv` (the same filters; every field, one row per request).
 */
import { z } from 'zod';
import { RequestQuerySchema, type RequestQuery } from '../../../shared/request-record';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import type { RequestLog } from './request-log';

function requestQuery(ctx: RouteContext): RequestQuery {
  const parsed = RequestQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export function requestLogRoutes(log: RequestLog): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/requests',
      auth: true,
      handle: (ctx) => ctx.json(200, log.query(requestQuery(ctx))),
    },
    {
      method: 'GET',
      path: '/api/requests.csv',
      auth: true,
      handle(ctx) {
        const text = log.csv(requestQuery(ctx));
        ctx.res.writeHead(200, {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Length': Buffer.byteLength(text),
          'Content-Disposition': 'attachment; filename="exobar-requests.csv"',
          'Cache-Control': 'no-store',
        });
        ctx.res.end(ctx.req.method === 'HEAD' ? undefined : text);
      },
    },
  ];
}
