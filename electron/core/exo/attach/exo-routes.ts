/**
 * Control endpoints of attach mode, behind the bearer token like every `/api/` route:
 *
 * - `GET /api/exo/probe?url=`: tests an address (does exo answer `GET /node_id`?); never attaches.
 * - `POST /api/exo/attach {"url"}`: tests the address first; 502 `exo_not_found` when nothing
 *   exo-like answers, else attaches, saves `exo.url` and answers what it found.
 * - `POST /api/exo/detach`: stops reading exo and clears `exo.url`.
 * - `DELETE /api/instances/:id` for an exo instance (`exo:<model>`): deletes that model's
 *   instances on exo; 404 `instance_not_found` when exo runs none of it (an exo id is
 *   never a malformed local one); any other id goes to the local route (`localRoutes`).
 */
import { z } from 'zod';
import { ExoAttachRequestSchema } from '../../../../shared/api';
import { ApiError, rejected } from '../../api/api-error';
import { RouteTable, type ApiRoute } from '../../api/route-types';
import { ExoAttachError, type ExoAttachment } from './exo-attachment';

const ProbeQuerySchema = z.strictObject({ url: z.string().min(1).max(2048) });

function attachError(error: unknown): unknown {
  if (!(error instanceof ExoAttachError)) return error;
  return error.code === 'invalid_exo_url' ? rejected(400, error.code, error.message, 'url') : new ApiError(502, error.code, error.message, { param: 'url' });
}

/** The attach-mode endpoints over one attachment; `localRoutes` answer what is not exo's (a local instance's DELETE). */
export function exoRoutes(attachment: ExoAttachment, localRoutes: readonly ApiRoute[] = []): ApiRoute[] {
  const local = new RouteTable(localRoutes);
  return [
    {
      method: 'DELETE',
      path: '/api/instances/:id',
      auth: true,
      async handle(ctx) {
        const id = ctx.params.id ?? '';
        if (await attachment.stopInstance(id)) return ctx.json(200, { id, deleted: true });
        // exo's instance ids are `exo:<model>` (exo-tracker.ts); its model ids hold a `/`, which no local id does.
        if (id.startsWith('exo:')) throw new ApiError(404, 'instance_not_found', `No instance ${id}: exo runs no instance of ${id.slice('exo:'.length)}`);
        const match = local.match('DELETE', ctx.url.pathname);
        if ('allowed' in match) throw new ApiError(404, 'instance_not_found', `No instance ${id}`);
        await match.route.handle({ ...ctx, params: match.params });
      },
    },
    {
      method: 'GET',
      path: '/api/exo/probe',
      auth: true,
      async handle(ctx) {
        const query = ProbeQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
        if (!query.success) throw rejected(400, 'invalid_query', 'GET /api/exo/probe needs ?url=<exo address>, e.g. ?url=http://127.0.0.1:52415', 'url');
        ctx.json(200, await attachment.probe(query.data.url));
      },
    },
    {
      method: 'POST',
      path: '/api/exo/attach',
      auth: true,
      async handle(ctx) {
        const body = await ctx.body(ExoAttachRequestSchema);
        try {
          ctx.json(200, { attached: true, ...(await attachment.attach(body.url)) });
        } catch (error) {
          throw attachError(error);
        }
      },
    },
    {
      method: 'POST',
      path: '/api/exo/detach',
      auth: true,
      async handle(ctx) {
        const url = attachment.url;
        await attachment.detach();
        ctx.json(200, { detached: url !== null, url });
      },
    },
  ];
}
