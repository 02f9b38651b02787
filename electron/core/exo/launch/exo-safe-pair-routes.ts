/**
 * `GET/POST /api/launch/safe-pair` while exo is attached, with the local version's
 * answer shapes (electron/core/safe-pair/safe-pair-routes.ts): GET answers the plan,
 * POST answers `{instances, launch, plan}` once both models are ready on exo. POST
 * takes an optional JSON body `{"acknowledgeRisk": true, "acknowledgeMemory": true}`
 * (past the fast-synch gate, past the per-Mac fit check). When no exo is attached the
 * local routes answer.
 */
import { LaunchSafePairRequestSchema, type Settings } from '../../../../shared/api';
import type { LaunchProgress } from '../../../../shared/snapshot';
import { RouteTable, type ApiRoute, type RouteContext } from '../../api/route-types';
import { launchExoSafePair, planExoSafePair, type ExoSafePairOptions, type FastSynchOf } from './exo-safe-pair';

export interface ExoSafePairRoutesOptions {
  /** The attached exo's URL, or null (the local routes answer then). */
  exoUrl: () => string | null;
  getSettings: () => Settings;
  fastSynchOf?: FastSynchOf;
  headroomBytes?: number;
  readyTimeoutMs?: number;
  /** Launch progress, for the integrator to show in the snapshot. */
  onProgress?: (progress: LaunchProgress) => void;
  /** The local safe launch routes, used while no exo is attached. */
  localRoutes: ApiRoute[];
}

/** The local launch's body: the fast-synch gate's acknowledgement, and the per-Mac fit check's. */
const LaunchBodySchema = LaunchSafePairRequestSchema;

/** The safe launch routes for attach mode; register before the local ones. */
export function exoSafePairRoutes(options: ExoSafePairRoutesOptions): ApiRoute[] {
  const local = new RouteTable(options.localRoutes);
  const base = (url: string): ExoSafePairOptions => ({
    url,
    settings: options.getSettings(),
    fastSynchOf: options.fastSynchOf,
    headroomBytes: options.headroomBytes,
  });
  let running: Promise<unknown> | null = null;

  const delegate = async (ctx: RouteContext) => {
    const match = local.match(ctx.req.method ?? 'GET', ctx.url.pathname);
    if (!('allowed' in match)) await match.route.handle({ ...ctx, params: match.params });
  };

  async function get(ctx: RouteContext): Promise<void> {
    const url = options.exoUrl();
    if (!url) return delegate(ctx);
    ctx.json(200, await planExoSafePair(base(url)));
  }

  async function post(ctx: RouteContext): Promise<void> {
    const url = options.exoUrl();
    if (!url) return delegate(ctx);
    const hasBody = Number(ctx.req.headers['content-length'] ?? 0) > 0 || ctx.req.headers['transfer-encoding'] !== undefined;
    const body = hasBody ? await ctx.body(LaunchBodySchema) : LaunchBodySchema.parse({});
    // One launch at a time: a second POST waits for the first, then finds both placed.
    while (running) await running.catch(() => undefined);
    const launch = launchExoSafePair(base(url), {
      acknowledgeRisk: body.acknowledgeRisk,
      acknowledgeMemory: body.acknowledgeMemory,
      readyTimeoutMs: options.readyTimeoutMs,
      onProgress: options.onProgress,
    });
    running = launch;
    try {
      const result = await launch;
      ctx.json(200, { instances: result.instances, launch: result.launch, plan: await planExoSafePair(base(url)) });
    } finally {
      running = null;
    }
  }

  return [
    { method: 'GET', path: '/api/launch/safe-pair', auth: true, handle: get },
    { method: 'POST', path: '/api/launch/safe-pair', auth: true, handle: post },
  ];
}
