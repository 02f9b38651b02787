/**
 * `GET /api/history?model=&range=1h|24h|7d|30d` (bearer token): per model, its points
 * (minutes for 1h and 24h, hours for 7d and 30d) and its `slower_than_usual` warning.
 */
import { z } from 'zod';
import { HistoryQuerySchema } from '../../../shared/history';
import { rejected } from '../api/api-error';
import type { ApiRoute } from '../api/route-types';
import type { History } from './history';

export function historyRoutes(history: History): ApiRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/history',
      auth: true,
      handle(ctx) {
        const parsed = HistoryQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
        if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
        ctx.json(200, history.query(parsed.data.range, parsed.data.model));
      },
    },
  ];
}
