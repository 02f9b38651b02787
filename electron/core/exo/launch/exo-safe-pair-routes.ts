/**
 * `GET/POST /api/launch/safe-pair` while exo is attached, with the local version's
 * answer shapes (electron/core/safe-pair/safe-pair-routes.ts): GET answers the plan,
 * POST answers `{instances, launch, plan}` once both models are ready on exo. POST
 * takes an optional JSON body `{"acknowledgeRisk": true, "acknowledgeMemory": true}`
 * (past the fast-synch gate, past the per-Mac fit check). When no exo is attached the
 * local routes answer. While the attached exo does not answer, GET still answers 200
 * with what it knows: this Mac's plan, `exo.unavailable` saying why in words, and a
 * blocker (the launch would go to exo).
 */
import { LaunchSafePairRequestSchema, type SafePairPlan, type Settings } from '../../../../shared/api';
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

  /** The local GET's plan, read from its answer rather than sent (none when no local route answers). */
  const localPlan = async (ctx: RouteContext): Promise<SafePairPlan | null> => {
    let plan: SafePairPlan | null = null;
    await delegate({ ...ctx, json: (status, body) => void (status === 200 && (plan = body as SafePairPlan)) });
    return plan;
  };

  async function get(ctx: RouteContext): Promise<void> {
    const url = options.exoUrl();
    if (!url) return delegate(ctx);
    let exoPlan: SafePairPlan;
    try {
      exoPlan = await planExoSafePair(base(url));
    } catch (error) {
      const unavailable = `exo's part of the plan is unavailable: ${(error as Error).message}. The figures below are this Mac's alone.`;
      ctx.log.warn({ err: error }, 'safe pair plan on exo unavailable');
      const local = await localPlan(ctx);
      const models = local?.models ?? [];
      const memory = local?.memory ?? { requiredBytes: 0, freeBytes: 0, headroomBytes: 0 };
      const blockers = [...(local?.blockers ?? []), unavailable];
      ctx.json(200, { ...local, models, memory, blockers, canRun: false, exo: { url, fastSynchRisk: null, unavailable } } satisfies SafePairPlan);
      return;
    }
    ctx.json(200, exoPlan);
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
