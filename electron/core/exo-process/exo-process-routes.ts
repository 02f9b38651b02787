/**
 * Control endpoints of this Mac's exo as exobar runs it, behind the bearer token
 * (docs/api.md, "This Mac's exo"):
 *
 * - `GET /api/exo/process`: the state (`ExoProcessState`, as the snapshot's `exoProcess`).
 * - `POST /api/exo/process/start` `{fastSynch?, acknowledgeRisk?}` (body optional).
 * - `POST /api/exo/process/stop`: SIGINT, SIGTERM, SIGKILL, then the runners exo left.
 * - `POST /api/exo/process/restart` `{consent, fastSynch?, acknowledgeRisk?}`: 409
 *   `exo_restart_required` without `consent: true`, because a restart deletes every
 *   instance that spans this Mac.
 *
 * Each answers 202 with the state at once (progress follows in the snapshot), or, with
 * `?wait=done`, 200 once exo runs, failed or stopped. A refusal (`fast_synch_shared_gpu`,
 * `exo_restart_required`) is decided before anything happens, so it is a 409 either way.
 */
import { z } from 'zod';
import type { Settings } from '../../../shared/api';
import { ExoProcessRestartBodySchema, ExoProcessStartBodySchema } from '../../../shared/exo-fast-synch';
import type { ExoProcessState } from '../../../shared/exo-process';
import type { ExoProcessControl } from '../../../shared/exo-process-control';
import { ApiError, rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import { controlExoProcess, refusalOrUnderWay } from './exo-process-control';
import { ExoProcessError, type ExoProcessManager } from './exo-process-manager';

export interface ExoProcessRoutesOptions {
  manager: ExoProcessManager;
  /** The settings now: `defaultFastSynch` is the override when a start names none. */
  getSettings: () => Pick<Settings, 'defaultFastSynch'>;
}

const QuerySchema = z.strictObject({
  /** `?wait=done`: answer once the action has ended instead of at once. */
  wait: z.enum(['none', 'done']).default('none'),
});

function waitQuery(ctx: RouteContext): 'none' | 'done' {
  const parsed = QuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
  return parsed.data.wait;
}

/** True when the request carries a body (a start may come without one). */
function hasBody(ctx: RouteContext): boolean {
  const length = ctx.req.headers['content-length'];
  return (length !== undefined && length !== '0') || ctx.req.headers['transfer-encoding'] !== undefined;
}

function toApiError(error: unknown): unknown {
  return error instanceof ExoProcessError ? new ApiError(error.status, error.code, error.message) : error;
}

/** GET /api/exo/process and POST /api/exo/process/{start,stop,restart}. */
export function exoProcessRoutes(options: ExoProcessRoutesOptions): ApiRoute[] {
  const { manager } = options;
  /** Runs the action and answers: 202 at once (200 if it is already done), or 200 after it with `?wait=done`; a refusal is a 409 either way. */
  const run = async (ctx: RouteContext, wait: 'none' | 'done', request: ExoProcessControl): Promise<void> => {
    const work = controlExoProcess({ manager, snapshot: () => ctx.node.snapshot(), defaultFastSynch: () => options.getSettings().defaultFastSynch }, request);
    let done: ExoProcessState | null;
    try {
      done = wait === 'done' ? await work : await refusalOrUnderWay(work);
    } catch (error) {
      throw toApiError(error);
    }
    if (done) return ctx.json(200, done);
    // Going on without the caller: its outcome is in the snapshot; a late failure goes to the log.
    work.catch((error: unknown) => ctx.log.warn({ err: error }, 'exo process action failed'));
    ctx.json(202, manager.state());
  };
  return [
    { method: 'GET', path: '/api/exo/process', auth: true, handle: (ctx) => ctx.json(200, manager.state()) },
    {
      method: 'POST',
      path: '/api/exo/process/start',
      auth: true,
      async handle(ctx) {
        const wait = waitQuery(ctx);
        const body = hasBody(ctx) ? await ctx.body(ExoProcessStartBodySchema) : {};
        await run(ctx, wait, { action: 'start', ...body });
      },
    },
    { method: 'POST', path: '/api/exo/process/stop', auth: true, handle: (ctx) => run(ctx, waitQuery(ctx), { action: 'stop' }) },
    {
      method: 'POST',
      path: '/api/exo/process/restart',
      auth: true,
      async handle(ctx) {
        const wait = waitQuery(ctx);
        await run(ctx, wait, { action: 'restart', ...(await ctx.body(ExoProcessRestartBodySchema)) });
      },
    },
  ];
}
