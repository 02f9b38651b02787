/**
 * The control API of residency, behind the bearer token:
 * `POST /api/instances/{id}/unload` (unload now; refused while requests are queued or in
 * flight) and `POST /api/instances/{id}/residency` (`pin`, `ttlSeconds` with -1 for never).
 */
import { z } from 'zod';
import { ResidencyRequestSchema } from '../../../shared/api';
import { rejected } from '../api/api-error';
import type { ApiRoute, RouteContext } from '../api/route-types';
import { ttlFromSetting } from './on-demand-settings';

const InstanceIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:~-]+$/, 'an instance id holds only letters, digits and . _ : ~ -');

function instanceId(ctx: RouteContext): string {
  const parsed = InstanceIdSchema.safeParse(ctx.params.id);
  if (!parsed.success) throw rejected(400, 'invalid_instance_id', `invalid instance id: ${parsed.error.issues[0]?.message ?? 'malformed'}`, 'id');
  return parsed.data;
}

const instanceOf = (ctx: RouteContext, id: string) => ctx.node.snapshot().instances.find((i) => i.id === id) ?? null;

async function unload(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  await ctx.node.unloadInstance(id, 'operator');
  ctx.json(200, { id, unloaded: true });
}

async function residency(ctx: RouteContext): Promise<void> {
  const id = instanceId(ctx);
  const body = await ctx.body(ResidencyRequestSchema);
  ctx.node.setResidency(id, {
    ...(body.pin !== undefined ? { pin: body.pin } : {}),
    ...(body.ttlSeconds !== undefined ? { ttlSeconds: ttlFromSetting(body.ttlSeconds) } : {}),
  });
  ctx.json(200, { id, instance: instanceOf(ctx, id) });
}

export function residencyRoutes(): ApiRoute[] {
  return [
    { method: 'POST', path: '/api/instances/:id/unload', auth: true, handle: unload },
    { method: 'POST', path: '/api/instances/:id/residency', auth: true, handle: residency },
  ];
}
