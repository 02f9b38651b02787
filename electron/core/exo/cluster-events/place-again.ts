/**
 * Place again: a lost model placed as it was, through exo's own placement
 * (`GET /instance/placement` with the lost instance's kind, sharding and number of
 * Macs, then `POST /instance`), behind the same checks as the safe launch on exo:
 *
 * - memory: each Mac the placement picks must have the model's share free, plus headroom
 *   (placement reserves nothing);
 * - fast synch: a ring instance landing on a Mac that already runs another ring
 *   instance with fast synch on (or assumed on: exo does not publish it) is refused
 *   with `fast_synch_shared_gpu` unless the operator acknowledges the risk.
 *
 * A model already served again, or already placed again and loading, is not placed twice.
 */
import type { PlaceAgainResult } from '../../../../shared/exo-cluster-events';
import { DEFAULT_HEADROOM_BYTES } from '../../../../shared/safe-pair-plan';
import { formatMemory } from '../../../../shared/memory-words';
import { NodeError } from '../../node/node-types';
import { exoCall, readCluster, storageOf, downloadedModels } from '../launch/exo-cluster-api';
import type { FastSynchOf } from '../launch/exo-safe-pair';
import { parseInstances } from '../parse-exo-state';
import type { LostModel } from './lost-models';
import { nodeLabels, labelOf } from './node-labels';
import { GONE_STATUSES } from '../../../../shared/instance-state';

export interface PlaceAgainOptions {
  url: string;
  lost: LostModel;
  fastSynchOf: FastSynchOf;
  acknowledgeRisk?: boolean;
  headroomBytes?: number;
}

export type { PlaceAgainResult };

export async function placeAgain(options: PlaceAgainOptions): Promise<PlaceAgainResult> {
  const { url, lost } = options;
  const cluster = await readCluster(url);
  const labels = nodeLabels(cluster.nodes);
  const existing = [...cluster.instances.values()].find((i) => i.modelId === lost.model);
  if (existing) {
    const nodes = existing.shards.flatMap((s) => (s.nodeId ? [labelOf(labels, s.nodeId)] : []));
    return { model: lost.model, instanceId: existing.instanceId, nodes, alreadyPlaced: true };
  }
  const query = new URLSearchParams({
    model_id: lost.model,
    sharding: lost.placement.sharding ?? 'Pipeline',
    instance_meta: lost.placement.instanceType === 'jaccl' ? 'MlxJaccl' : 'MlxRing',
    min_nodes: String(lost.placement.nodeCount),
  });
  const answer = await exoCall(url, 'GET', `/instance/placement?${query}`);
  const lostWhere = `it ran on ${lost.nodes.map((n) => n.label).join(' and ')}; ${lost.why}`;
  if (answer.status !== 200) throw new NodeError('launch_failed', `exo cannot place ${lost.model} as before (${lostWhere}): ${answer.message}`, 409);
  const placed = parseInstances({ placement: answer.json }).entries?.get('placement');
  if (!placed) throw new NodeError('launch_failed', `exo answered a placement of ${lost.model} that exobar cannot read`, 502);
  const nodeIds = placed.shards.flatMap((s) => (s.nodeId ? [s.nodeId] : []));

  // Memory: the model's share on each Mac, against what exo says is available there.
  const size = storageOf(answer.json) ?? (await downloadedModels(url).catch(() => [])).find((m) => m.id === lost.model)?.storageBytes ?? null;
  const headroom = options.headroomBytes ?? DEFAULT_HEADROOM_BYTES;
  if (size !== null) {
    const share = size / Math.max(1, nodeIds.length);
    for (const id of nodeIds) {
      const available = cluster.nodes.get(id)?.memoryAvailableBytes ?? null;
      if (available !== null && share + headroom > available)
        throw new NodeError(
          'launch_failed',
          `${labelOf(labels, id)} has ${formatMemory(available)} available; ${lost.model} needs ${formatMemory(share)} there plus ${formatMemory(headroom)} headroom`,
          409,
        );
    }
  }

  // Fast synch: a second ring model on a Mac whose fast synch is on.
  if (placed.instanceType !== 'jaccl' && !options.acknowledgeRisk) {
    for (const id of nodeIds) {
      const fast = options.fastSynchOf(id);
      if (!fast.enabled) continue;
      const rings = [...cluster.instances.values()].filter(
        (i) => i.instanceType === 'ring' && i.shards.some((s) => s.nodeId === id && !GONE_STATUSES.has(cluster.runners.get(s.runnerId)?.tag ?? '')),
      );
      if (rings.length === 0) continue;
      throw new NodeError(
        'fast_synch_shared_gpu',
        `${lost.model} would be a second ring model on ${labelOf(labels, id)} (beside ${rings.map((r) => r.modelId).join(', ')}) with fast synch ${fast.assumed ? 'on (assumed: exo does not publish it, its default is on)' : 'on'}: ` +
          'two MLX processes spinning on one GPU can collapse throughput or wedge the GPU. Start exo there with EXO_FAST_SYNCH=false, or place it anyway acknowledging the risk.',
        409,
      );
    }
  }

  const created = await exoCall(url, 'POST', '/instance', { instance: answer.json });
  if (created.status !== 200) throw new NodeError('launch_failed', `exo refused to create the instance of ${lost.model}: ${created.message}`, 502);
  return { model: lost.model, instanceId: placed.instanceId, nodes: nodeIds.map((id) => labelOf(labels, id)), alreadyPlaced: false };
}
