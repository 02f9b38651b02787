/**
 * The checks' control endpoints (bearer token):
 * - `POST /api/checks/sharing`: body SharingCheckRequestSchema; `202 {id, status}`;
 *   `409 check_running` while one runs.
 * - `GET /api/checks`: the kept reports, newest first, and the check running now (CheckListSchema).
 * - `GET /api/checks/{id}`: progress while it runs, then the result and the markdown.
 * - `DELETE /api/checks/{id}`: cancels; answers once the instances are back as before.
 */
import { SharingCheckRequestSchema } from '../../../shared/sharing-check';
import { ApiError } from '../api/api-error';
import type { ApiRoute } from '../api/route-types';
import { CheckBusyError, type CheckManager } from './check-manager';

export function checkRoutes(checks: CheckManager): ApiRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/checks/sharing',
      auth: true,
      handle: async (ctx) => {
        const options = await ctx.body(SharingCheckRequestSchema);
        try {
          const status = checks.start(options);
          ctx.json(202, { id: status.id, status });
        } catch (error) {
          if (error instanceof CheckBusyError) throw new ApiError(409, 'check_running', error.message);
          throw error;
        }
      },
    },
    { method: 'GET', path: '/api/checks', auth: true, handle: (ctx) => ctx.json(200, { checks: checks.list(), running: checks.running() }) },
    {
      method: 'GET',
      path: '/api/checks/:id',
      auth: true,
      handle: (ctx) => {
        const status = checks.get(ctx.params.id!);
        if (!status) throw new ApiError(404, 'check_not_found', `no check "${ctx.params.id}"`);
        ctx.json(200, status);
      },
    },
    {
      method: 'DELETE',
      path: '/api/checks/:id',
      auth: true,
      handle: async (ctx) => {
        const id = ctx.params.id!;
        if (!checks.get(id)) throw new ApiError(404, 'check_not_found', `no check "${id}"`);
        const cancelled = await checks.cancel(id);
        ctx.json(200, { id, cancelled, status: checks.get(id) });
      },
    },
  ];
}
