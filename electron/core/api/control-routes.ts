/**
 * The control API under `/api/`, behind the bearer token: the snapshot (once and as
 * server-sent events), instances (create, change, delete) and the model catalog.
 * Bodies are validated with the shared schemas (shared/api.ts), the same ones the
 * Electron IPC uses.
 */
import { z } from 'zod';
import { CreateInstanceRequestSchema, UpdateInstanceRequestSchema } from '../../../shared/api';
import type { InstanceSnapshot, Snapshot } from '../../../shared/snapshot';
import { ApiError, rejected } from './api-error';
import type { ApiRoute, RouteContext } from './route-types';
import { SseStream } from './sse-stream';

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

async function createInstance(ctx: RouteContext): Promise<void> {
  const q = query(ctx, CreateQuerySchema);
  const body = await ctx.body(CreateInstanceRequestSchema);
  let instance: InstanceSnapshot = await ctx.node.createInstance(body);
  if (q.wait === 'ready') {
    await ctx.node.waitForReady(instance.id, q.timeout_ms);
    instance = findInstance(ctx.node.snapshot(), instance.id) ?? instance;
  }
  ctx.json(201, { id: instance.id, instance });
}

async function updateInstance(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  const body = await ctx.body(UpdateInstanceRequestSchema);
  await ctx.node.updateInstance(id, body);
  ctx.json(200, { id, instance: findInstance(ctx.node.snapshot(), id) });
}

async function deleteInstance(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  await ctx.node.deleteInstance(id);
  ctx.json(200, { id, deleted: true });
}

/** Stops every instance (the "stop all" action); each deletion stops its runner cleanly. */
async function deleteAllInstances(ctx: RouteContext): Promise<void> {
  const ids = ctx.node.snapshot().instances.map((i) => i.id);
  const results = await Promise.allSettled(ids.map((id) => ctx.node.deleteInstance(id)));
  const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [ids[i]!] : []));
  if (failed.length > 0) throw new ApiError(500, 'delete_failed', `could not stop instances: ${failed.join(', ')}`);
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
  const flush = (): void => {
    if (pending == null || sse.isClosed) return;
    const next = pending;
    pending = null;
    sse.data(next);
  };
  const push = (snapshot: Snapshot): void => {
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

export function controlRoutes(): ApiRoute[] {
  return [
    { method: 'GET', path: '/api/state', auth: true, handle: (ctx) => ctx.json(200, ctx.node.snapshot()) },
    { method: 'GET', path: '/api/events', auth: true, handle: events },
    { method: 'GET', path: '/api/models', auth: true, handle: (ctx) => ctx.json(200, { models: ctx.node.models() }) },
    { method: 'POST', path: '/api/instances', auth: true, handle: createInstance },
    { method: 'DELETE', path: '/api/instances', auth: true, handle: deleteAllInstances },
    { method: 'PATCH', path: '/api/instances/:id', auth: true, handle: updateInstance },
    { method: 'DELETE', path: '/api/instances/:id', auth: true, handle: deleteInstance },
  ];
}
