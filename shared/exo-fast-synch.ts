/**
 * The fast-synch value for this Mac's exo, decided before exo starts.
 *
 * exo reads EXO_FAST_SYNCH once per process and applies it to every runner it spawns,
 * so one value serves every instance that has a shard on this Mac. Ring instances need
 * it off (several MLX processes spinning on one GPU can wedge it); a JACCL instance
 * wants it on for its CPU-GPU hop, but only while it is alone on the GPU (MLX calls the
 * flag unreliable in any cross-stream workload, ml-explore/mlx PR #4005). So it is on
 * only for one JACCL instance alone on this Mac; any plan with two or more instances
 * gets off, the safe side, and JACCL runs slower. The operator may force a value, with the
 * same `acknowledgeRisk` gate as a local launch (shared/fast-synch-policy.ts).
 */
import { z } from 'zod';
import { FastSynchOverrideSchema, InstanceTypeSchema } from './api';
import { sharedGpuWarnings, type PlacedInstance } from './fast-synch-policy';
import type { FastSynchOverride, InstanceType } from './snapshot';

/** One instance that will have a shard on this Mac. */
export interface ExoPlannedInstance {
  id: string;
  model: string;
  /** exo's instance kind: MlxRing → ring, MlxJaccl → jaccl. */
  instanceType: InstanceType;
  /** Macs the instance spans; an instance on one Mac is always ring, whatever it asked for. */
  nodeCount: number;
}

export interface ExoFastSynchPlan {
  instances: readonly ExoPlannedInstance[];
  /** auto follows the instances; on/off is the operator's choice (or the settings default). */
  override: FastSynchOverride;
  /** Needed to force fast synch on while two ring instances share this GPU. */
  acknowledgeRisk: boolean;
}

/** The plan as a request carries it (control API, IPC): validated at the boundary. */
export const ExoFastSynchPlanSchema = z.strictObject({
  instances: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(200),
        model: z.string().min(1).max(300),
        instanceType: InstanceTypeSchema,
        nodeCount: z.number().int().min(1).max(64),
      }),
    )
    .max(64),
  override: FastSynchOverrideSchema.default('auto'),
  acknowledgeRisk: z.boolean().default(false),
});

/** A restart of this Mac's exo as a request carries it: nothing happens without `consent: true`. */
export const ExoRestartRequestSchema = z.strictObject({
  consent: z.boolean().default(false),
  plan: ExoFastSynchPlanSchema.optional(),
  /** The instances exo runs with a shard on this Mac (named in the words a refusal gives). */
  spanningInstances: z
    .array(z.strictObject({ id: z.string().min(1), model: z.string().min(1) }))
    .max(64)
    .default([]),
});

export type ExoFastSynchDecision = { ok: true; enabled: boolean; reason: string } | { ok: false; code: 'fast_synch_shared_gpu'; message: string };

/** The kind exo really runs: a single-Mac instance is ring (JACCL needs RDMA between Macs). */
export function effectiveInstanceType(instance: ExoPlannedInstance): InstanceType {
  return instance.nodeCount <= 1 ? 'ring' : instance.instanceType;
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Decides EXO_FAST_SYNCH for this Mac's exo from what it will run. Refuses (code
 * `fast_synch_shared_gpu`, the node's 409) to force it on beside two ring instances
 * unless the risk is acknowledged.
 */
export function decideExoFastSynch(plan: ExoFastSynchPlan): ExoFastSynchDecision {
  const ring = plan.instances.filter((i) => effectiveInstanceType(i) === 'ring');
  const jaccl = plan.instances.filter((i) => effectiveInstanceType(i) === 'jaccl');
  if (plan.override === 'on') {
    const placed: PlacedInstance[] = plan.instances.map((i) => ({ id: i.id, model: i.model, instanceType: effectiveInstanceType(i), fastSynch: true }));
    const risky = sharedGpuWarnings(placed).length > 0;
    if (risky && !plan.acknowledgeRisk) {
      return {
        ok: false,
        code: 'fast_synch_shared_gpu',
        message:
          `Forcing fast synch on while ${count(plan.instances.length, 'instance')} share this Mac's GPU can spin forever and ` +
          'wedge the GPU until reboot; leave it automatic, or send "acknowledgeRisk": true to go ahead',
      };
    }
    return { ok: true, enabled: true, reason: risky ? 'forced on by the operator (risk acknowledged)' : 'forced on by the operator' };
  }
  if (plan.override === 'off') return { ok: true, enabled: false, reason: 'forced off by the operator' };
  if (plan.instances.length === 0) {
    return { ok: true, enabled: false, reason: 'nothing planned yet: off, the value ring instances need (every single-Mac instance is ring)' };
  }
  if (jaccl.length === 0) return { ok: true, enabled: false, reason: `ring only (${count(ring.length, 'instance')}): off` };
  if (ring.length === 0 && jaccl.length === 1) return { ok: true, enabled: true, reason: 'one JACCL instance alone on this Mac: on' };
  if (ring.length === 0) {
    return { ok: true, enabled: false, reason: `JACCL only (${count(jaccl.length, 'instance')}) sharing this Mac's GPU: off, the JACCL instances run slower` };
  }
  return {
    ok: true,
    enabled: false,
    reason:
      `mixed (${count(ring.length, 'ring instance')}, ${count(jaccl.length, 'JACCL instance')}): off, because exo has one value ` +
      'for all its runners and ring needs it off; the JACCL instances run slower',
  };
}

/**
 * `POST /api/exo/process/start`'s body (optional): the fast-synch override for this
 * start (default: the settings' `defaultFastSynch`) and the risk gate.
 */
export const ExoProcessStartBodySchema = z.strictObject({
  fastSynch: FastSynchOverrideSchema.optional(),
  acknowledgeRisk: z.boolean().default(false),
});
export type ExoProcessStartBody = z.infer<typeof ExoProcessStartBodySchema>;

/**
 * `POST /api/exo/process/restart`'s body: nothing restarts without `consent: true` (a
 * restart deletes the instances that span this Mac). `fastSynch` decides the value
 * anew for what this Mac runs; without it exo restarts with the value it had.
 */
export const ExoProcessRestartBodySchema = z.strictObject({
  consent: z.boolean().default(false),
  fastSynch: FastSynchOverrideSchema.optional(),
  acknowledgeRisk: z.boolean().default(false),
});
export type ExoProcessRestartBody = z.infer<typeof ExoProcessRestartBodySchema>;
