/**
 * The safe launch's control endpoints, for the API server's `extraRoutes`:
 *
 * - `GET /api/launch/safe-pair`: the plan, nothing done.
 * - `POST /api/launch/safe-pair`: carries it out. By default the answer comes once both
 *   runners are ready (200) or the launch failed (the error, with the progress left in
 *   the snapshot); `?wait=none` answers 202 at once and the launch goes on, its progress
 *   in the snapshot. A plan with blockers answers 409 (`launch_failed`) listing them.
 *   A POST while a launch runs joins it.
 */
import { z } from 'zod';
import { LaunchSafePairRequestSchema, type Settings } from '../../../shared/api';
import type { FitChecker } from '../fit/fit-gate';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import type { SystemMemory } from '../system-memory';
import { currentSafePairLaunch, launchSafePair, type SafePairLaunchOptions } from './launch-safe-pair';
import { acknowledgingMemory, planSafePairForNode } from './plan-for-node';

export interface SafePairRoutesOptions {
  /** The settings now (they can change while the app runs). */
  getSettings: () => Settings;
  /** Replaces the OS memory reading (tests). */
  readMemory?: () => Promise<SystemMemory>;
  headroomBytes?: number;
  launch?: SafePairLaunchOptions;
  /** Replaces the fit check's readings (tests). */
  fitChecker?: FitChecker;
}

/** The optional JSON body of the POST: `{"acknowledgeMemory": true}` launches past the fit check. */
async function launchBody(ctx: RouteContext): Promise<{ acknowledgeMemory: boolean }> {
  const length = Number(ctx.req.headers['content-length'] ?? 0);
  if (!(length > 0) && ctx.req.headers['transfer-encoding'] === undefined) return { acknowledgeMemory: false };
  // The same body as the attached exo's launch; `acknowledgeRisk` concerns only exo's fast-synch gate.
  return ctx.body(LaunchSafePairRequestSchema);
}

const LaunchQuerySchema = z.strictObject({
  /** `none`: answer 202 at once; `ready` (default): answer once both runners are ready. */
  wait: z.enum(['ready', 'none']).default('ready'),
});

/** The GET and POST routes of /api/launch/safe-pair, both behind the bearer token. */
export function safePairRoutes(options: SafePairRoutesOptions): ApiRoute[] {
  const plan = (ctx: RouteContext) =>
    planSafePairForNode(ctx.node, options.getSettings(), {
      readMemory: options.readMemory,
      headroomBytes: options.headroomBytes,
      fitChecker: options.fitChecker,
    });

  async function post(ctx: RouteContext): Promise<void> {
    const parsed = LaunchQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
    if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
    const body = await launchBody(ctx);
    // Joining comes first: while a launch runs, a fresh plan would count its half-loaded
    // models against free memory and could refuse for no reason.
    let launch = currentSafePairLaunch(ctx.node);
    if (!launch) {
      const planned = await plan(ctx);
      const current = body.acknowledgeMemory ? acknowledgingMemory(planned) : planned;
      if (body.acknowledgeMemory && planned.fit && !planned.fit.fits)
        ctx.log.warn({ fit: planned.fit.summary }, 'safe pair launched anyway past the fit check');
      const joined = currentSafePairLaunch(ctx.node);
      launch = joined ?? launchSafePair(ctx.node, current, options.launch);
      // A plan with blockers is refused at once (409), whatever `wait` says.
      if (!joined && !current.canRun) await launch;
    }
    if (parsed.data.wait === 'none') {
      // The outcome shows in the snapshot's launch progress; here it is only logged.
      launch.catch((error: unknown) => ctx.log.warn({ err: error }, 'safe pair launch failed'));
      ctx.json(202, { launching: true, launch: ctx.node.snapshot().launch });
      return;
    }
    const result = await launch;
    ctx.json(200, { instances: result.instances, launch: ctx.node.snapshot().launch, plan: await plan(ctx) });
  }

  return [
    { method: 'GET', path: '/api/launch/safe-pair', auth: true, handle: async (ctx) => ctx.json(200, await plan(ctx)) },
    { method: 'POST', path: '/api/launch/safe-pair', auth: true, handle: post },
  ];
}
