/**
 * Place again for a load that stalled (exo_load_stalled): the same placement as before,
 * with the stalled instance stopped once every check passed. Nothing of it is new: the
 * placement and its memory and fast-synch checks are place-again.ts's (the one a lost
 * model's Place again uses), Stop is the attachment's own (the page's Stop on that
 * instance). What is here is only the glue between them: what the stalled instance was
 * (kind, sharding, Macs), and waiting until exo's state no longer holds it, since exo
 * applies a delete through its master a moment later and would otherwise still count it.
 * A refusal (fast synch, memory) leaves the stalled instance where it is, so the
 * operator can answer it (acknowledge the risk) and Place again again.
 */
import type { PlaceAgainResult } from '../../../../shared/exo-cluster-events';
import { NodeError } from '../../node/node-types';
import { readCluster } from '../launch/exo-cluster-api';
import type { FastSynchOf } from '../launch/exo-safe-pair';
import { placeAgain, type PlaceAgainTarget } from '../cluster-events/place-again';
import type { ExoInstance } from '../attach/parse-exo-state';
import { labelOf, nodeLabels } from '../cluster-events/node-labels';

/** A stalled load as the attachment knows it: the address, exobar's id of the instance and what it was. */
export interface StalledLoad {
  url: string;
  exobarId: string;
  instance: ExoInstance;
  /** The cluster's Macs as last read (their names), for the labels the views use. */
  nodes: ReadonlyMap<string, { name: string | null }>;
}

/** What a stalled-load Place again needs of the attachment. */
export interface StalledLoadAccess {
  stalledLoad(model: string): StalledLoad | null;
  stopInstance(id: string): Promise<boolean>;
  fastSynchOf: FastSynchOf;
}

/** The stalled instance as Place again asks for it: its kind, sharding and Macs, as it was. */
export function stalledTarget(stalled: StalledLoad): PlaceAgainTarget {
  const { instance } = stalled;
  const labels = nodeLabels(stalled.nodes);
  const nodeIds = [...new Set(instance.shards.flatMap((s) => (s.nodeId ? [s.nodeId] : [])))];
  const nodes = nodeIds.map((nodeId) => ({ nodeId, name: stalled.nodes.get(nodeId)?.name ?? null, label: labelOf(labels, nodeId), lastSeenAt: null }));
  return {
    model: instance.modelId,
    nodes,
    why: 'its load stalled and exobar stopped it',
    placement: {
      kind: instance.kind,
      instanceType: instance.instanceType ?? 'ring',
      sharding: instance.sharding ?? 'Pipeline',
      nodeCount: Math.max(1, nodeIds.length),
    },
  };
}

/** How long exo may take to drop a deleted instance from its state. */
const GONE_WITHIN_MS = 10_000;

/**
 * Stops the model's stalled instance and places it again as it was. Null when the model
 * has no stalled load (the caller then says it has nothing to place again).
 */
export async function placeStalledAgain(access: StalledLoadAccess, model: string, acknowledgeRisk = false): Promise<PlaceAgainResult | null> {
  const stalled = access.stalledLoad(model);
  if (!stalled) return null;
  const stop = async (): Promise<void> => {
    await access.stopInstance(stalled.exobarId);
    const deadline = Date.now() + GONE_WITHIN_MS;
    while ((await readCluster(stalled.url)).instances.has(stalled.instance.instanceId)) {
      if (Date.now() > deadline)
        throw new NodeError('launch_failed', `exo still holds the stalled instance of ${model} ${GONE_WITHIN_MS / 1000} s after exobar deleted it; Stop it again, then place it`, 409);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return placeAgain({
    url: stalled.url,
    lost: stalledTarget(stalled),
    fastSynchOf: access.fastSynchOf,
    acknowledgeRisk,
    replacing: { instanceId: stalled.instance.instanceId, stop },
  });
}
