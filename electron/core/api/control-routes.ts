/**
 * The control API under `/api/`, behind the bearer token: the snapshot (once and as
 * server-sent events), instances (create, change, delete) and the model catalog.
 * Bodies are validated with the shared schemas (shared/api.ts), the same ones the
 * Electron IPC uses.
 */
import { z } from 'zod';
import { CreateInstanceRequestSchema, UpdateInstanceRequestSchema } from '../../../shared/api';
import type { InstanceSnapshot, Snapshot } from '../../../shared/snapshot';
import { instanceLifecycle } from '../../../shared/instance-state';
import type { FitChecker } from '../fit/fit-gate';
import { checkModelFits } from '../fit/model-fits';
import { launchInstance } from '../instance-launch';
import { requestsEndingOnStop, requestsWillEndWords } from '../../../shared/stop-confirmation';
import { ApiError, rejected } from './api-error';
import type { ApiRoute, RouteContext } from './route-types';
import { SseStream } from './sse-stream';
import { stopAllInstances } from '../node/stop-all';
import { localInstances } from '../../../shared/instance-state';

/** Interval at which /api/events pushes snapshots at most (the node throttles its listeners). */
export const EVENTS_THROTTLE_MS = 100;

/** Above this many unsent bytes a slow /api/events reader gets only the latest snapshot later. */
const EVENTS_MAX_BUFFERED_BYTES = 1024 * 1024;

const InstanceIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:~-]+$/, 'an instance id holds only letters, digits and . _ : ~ -');

const CreateQuerySchema = z.strictObject({
  /** `?wait=ready`: answer once the runner is ready (or failed) instead of at once. */
  wait: z.enum(['ready', 'none']).default('none'),
  timeout_ms: z.coerce.number().int().positive().max(3_600_000).optional(),
});

function instanceId(ctx: RouteContext): string {
  const parsed = InstanceIdSchema.safeParse(ctx.params.id);
  if (!parsed.success) throw rejected(400, 'invalid_instance_id', `invalid instance id: ${parsed.error.issues[0]?.message ?? 'malformed'}`, 'id');
  return parsed.data;
}

function query<S extends z.ZodType>(ctx: RouteContext, schema: S): z.output<S> {
  const parsed = schema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw rejected(400, 'invalid_query', `invalid query parameters:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function findInstance(snapshot: Snapshot, id: string): InstanceSnapshot | null {
  return snapshot.instances.find((i) => i.id === id) ?? null;
}

async function createInstance(ctx: RouteContext, options: ControlRoutesOptions): Promise<void> {
  const q = query(ctx, CreateQuerySchema);
  const body = await ctx.body(CreateInstanceRequestSchema);
  ctx.logFields.model = body.model;
  const launched = await launchInstance(ctx.node, body, { fitChecker: options.fitChecker });
  if (launched.fit && !launched.fit.fits) ctx.log.warn({ model: body.model, fit: launched.fit.summary }, 'launched anyway past the fit check');
  let instance: InstanceSnapshot = launched.instance;
  if (q.wait === 'ready') {
    await ctx.node.waitForReady(instance.id, q.timeout_ms);
    instance = findInstance(ctx.node.snapshot(), instance.id) ?? instance;
  }
  // 200 for the instance that already ran (nothing was created), 201 for a new one.
  ctx.json(launched.reused ? 200 : 201, { id: instance.id, instance, reused: launched.reused, state: instanceLifecycle(instance), fit: launched.fit });
}

async function updateInstance(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  const body = await ctx.body(UpdateInstanceRequestSchema);
  await ctx.node.updateInstance(id, body);
  ctx.json(200, { id, instance: findInstance(ctx.node.snapshot(), id) });
}

/** `?confirm=1` (or `true`): stop even though requests are in flight. */
const StopQuerySchema = z.strictObject({ confirm: z.enum(['1', 'true', '0', 'false']).optional() });
/** The optional body of a stop: `{"confirm": true}`. */
const StopBodySchema = z.strictObject({ confirm: z.boolean().default(false) });

/**
 * True when the caller confirmed ending requests in flight, by query or by body. A
 * DELETE without a body is the usual case, so the body is read only when one is sent.
 */
async function stopConfirmed(ctx: RouteContext): Promise<boolean> {
  const q = query(ctx, StopQuerySchema);
  if (q.confirm === '1' || q.confirm === 'true') return true;
  const length = ctx.req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || ctx.req.headers['transfer-encoding'] !== undefined;
  return hasBody ? (await ctx.body(StopBodySchema)).confirm : false;
}

/**
 * Refuses (409 `requests_in_flight`, with the count in `error.requests`) to stop
 * instances whose requests would end, unless the caller confirmed: one click must not
 * fail every request in flight without a question.
 */
async function refuseUnconfirmedStop(ctx: RouteContext, ids: readonly string[]): Promise<void> {
  const requests = requestsEndingOnStop(ctx.node.snapshot(), ids);
  if (requests === 0 || (await stopConfirmed(ctx))) return;
  throw new ApiError(
    409,
    'requests_in_flight',
    `${requestsWillEndWords(requests)} if ${ids.length === 1 ? 'this model stops' : 'these models stop'}; send "confirm": true (or ?confirm=1) to stop anyway`,
    {
      param: 'confirm',
      details: { requests },
    },
  );
}

/** POST /api/instances/{id}/retry: a new runner for an instance that failed or needs attention. */
function retryInstance(ctx: RouteContext): void {
  const id = instanceId(ctx);
  ctx.node.retryInstance(id);
  ctx.json(202, { id, instance: findInstance(ctx.node.snapshot(), id) });
}

async function deleteInstance(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  await refuseUnconfirmedStop(ctx, [id]);
  await ctx.node.deleteInstance(id);
  ctx.json(200, { id, deleted: true });
}

/** Stops every instance (the "stop all" action); each deletion stops its runner cleanly. */
async function deleteAllInstances(ctx: RouteContext): Promise<void> {
  await refuseUnconfirmedStop(
    ctx,
    localInstances(ctx.node.snapshot()).map((i) => i.id),
  );
  const { ids, failed } = await stopAllInstances(ctx.node);
  if (failed.length > 0) throw new ApiError(500, 'delete_failed', `could not stop instances: ${failed.map((f) => f.id).join(', ')}`);
  ctx.json(200, { deleted: ids });
}

/**
 * Server-sent snapshots: one at once, then on every change (throttled by the node to
 * one per 100 ms), with keep-alive comments. A reader that falls behind is not
 * buffered without bound: snapshots are whole states, so only the latest is kept.
 */
function events(ctx: RouteContext): void {
  const sse = new SseStream(ctx.res);
  sse.open();
  let pending: Snapshot | null = null;
  let lastSeq = -1;
  const flush = (): void => {
    if (pending == null || sse.isClosed) return;
    const next = pending;
    pending = null;
    sse.data(next);
  };
  const push = (snapshot: Snapshot): void => {
    // The subscription's first send is the version already sent at once: a version goes out once.
    if (snapshot.seq <= lastSeq) return;
    lastSeq = snapshot.seq;
    pending = snapshot;
    if (ctx.res.writableLength < EVENTS_MAX_BUFFERED_BYTES) flush();
  };
  ctx.res.on('drain', flush);
  push(ctx.node.snapshot());
  const unsubscribe = ctx.node.onSnapshot(push, EVENTS_THROTTLE_MS);
  const untrack = ctx.trackStream(() => sse.end());
  ctx.res.on('close', () => {
    unsubscribe();
    untrack();
  });
}

export interface ControlRoutesOptions {
  /** Replaces the fit check's memory readings (tests). */
  fitChecker?: FitChecker;
}

export function controlRoutes(options: ControlRoutesOptions = {}): ApiRoute[] {
  return [
    { method: 'GET', path: '/api/state', auth: true, handle: (ctx) => ctx.json(200, ctx.node.snapshot()) },
    { method: 'GET', path: '/api/events', auth: true, handle: events },
    { method: 'GET', path: '/api/models', auth: true, handle: (ctx) => ctx.json(200, { models: ctx.node.models() }) },
    // Each model's fit on this Mac now, for the Models panel (a fresh reading of the machine per call).
    {
      method: 'GET',
      path: '/api/models/fit',
      auth: true,
      handle: async (ctx) => ctx.json(200, { models: await checkModelFits(ctx.node, options.fitChecker) }),
    },
    { method: 'POST', path: '/api/instances', auth: true, handle: (ctx) => createInstance(ctx, options) },
    { method: 'DELETE', path: '/api/instances', auth: true, handle: deleteAllInstances },
    { method: 'PATCH', path: '/api/instances/:id', auth: true, handle: updateInstance },
    { method: 'DELETE', path: '/api/instances/:id', auth: true, handle: deleteInstance },
    { method: 'POST', path: '/api/instances/:id/retry', auth: true, handle: retryInstance },
  ];
}
