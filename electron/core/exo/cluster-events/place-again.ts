/**
 * Place again: a lost model placed again through exo's own placement, behind the same
 * checks as the safe launch on exo. A model whose load stalled comes here too, once
 * its stalled instance is stopped (load-stall/place-stalled-again.ts).
 *
 * - Where: as it was (`GET /instance/placement` with the lost instance's kind, sharding
 *   and number of Macs) while every Mac it ran on is still in the cluster; once one has
 *   left, on the Macs that remain, through exo's placement preview (`GET
 *   /instance/previews`): the same kind first, then the fewest Macs that hold it. Asking
 *   exo for the old Mac count there gets "No cycles found with sufficient memory" for
 *   ever, so the warning could never clear.
 * - Memory: each Mac the placement picks must have the model's share free, plus headroom
 *   (placement reserves nothing). When no placement fits, the refusal names each Mac that
 *   remains and how much memory it lacks, never exo's words alone.
 * - Fast synch: a ring instance landing on a Mac that already runs another ring
 *   instance with fast synch on (or assumed on: exo does not publish it) is refused
 *   with `fast_synch_shared_gpu` unless the operator acknowledges the risk.
 *
 * A model already served again, or already placed again and loading, is not placed twice.
 */
import type { PlaceAgainResult } from '../../../../shared/exo-cluster-events';
import { DEFAULT_HEADROOM_BYTES } from '../../../../shared/safe-pair-plan';
import { formatMemory } from '../../../../shared/memory-words';
import { NodeError } from '../../node/node-types';
import { z } from 'zod';
import { exoCall, readCluster, storageOf, downloadedModels, type ExoCluster } from '../launch/exo-cluster-api';
import type { FastSynchOf } from '../launch/exo-safe-pair';
import { parseInstances, type ExoInstance } from '../attach/parse-exo-state';
import type { LostModel } from './lost-models';
import { nodeLabels, labelOf } from './node-labels';
import { GONE_STATUSES } from '../../../../shared/instance-state';

/** What Place again needs of the model to place: a lost one (lost-models.ts) or one whose load stalled (load-stall/). */
export type PlaceAgainTarget = Pick<LostModel, 'model' | 'nodes' | 'why' | 'placement'>;

export interface PlaceAgainOptions {
  url: string;
  lost: PlaceAgainTarget;
  fastSynchOf: FastSynchOf;
  acknowledgeRisk?: boolean;
  headroomBytes?: number;
  /**
   * The instance this placement replaces (a stalled load): not counted as the model
   * already placed nor as a ring beside it, and stopped (`stop`) only once every check
   * passed, just before exo is asked to create the new one; a refusal leaves it as it is.
   */
  replacing?: { instanceId: string; stop: () => Promise<void> };
}

export type { PlaceAgainResult };

/** A placement exo offered: its tagged instance (as `POST /instance` takes it), parsed, and each Mac's share of the model. */
interface Offer {
  tagged: unknown;
  instance: ExoInstance;
  shareByNode: Map<string, number>;
}

const PreviewsSchema = z.object({
  previews: z.array(
    z.looseObject({
      instance_meta: z.string(),
      instance: z.unknown().nullable(),
      memory_delta_by_node: z.record(z.string(), z.number()).nullable().optional(),
      error: z.string().nullable().optional(),
    }),
  ),
});

export async function placeAgain(options: PlaceAgainOptions): Promise<PlaceAgainResult> {
  const { url, lost } = options;
  const cluster = await readCluster(url);
  const labels = nodeLabels(cluster.nodes);
  const replaced = options.replacing?.instanceId;
  const existing = [...cluster.instances.values()].find((i) => i.modelId === lost.model && i.instanceId !== replaced);
  if (existing) {
    const nodes = existing.shards.flatMap((s) => (s.nodeId ? [labelOf(labels, s.nodeId)] : []));
    return { model: lost.model, instanceId: existing.instanceId, nodes, alreadyPlaced: true };
  }
  const headroom = options.headroomBytes ?? DEFAULT_HEADROOM_BYTES;
  const lostWhere = `it ran on ${lost.nodes.map((n) => n.label).join(' and ')}; ${lost.why}`;
  const size = async (answer: unknown) =>
    storageOf(answer) ?? (await downloadedModels(url).catch(() => [])).find((m) => m.id === lost.model)?.storageBytes ?? null;
  const allBack = lost.nodes.every((n) => cluster.nodes.has(n.nodeId));
  const offer = allBack ? await asBefore(options, lostWhere, size) : await onTheMacsThatRemain(options, cluster, headroom, lostWhere, size);

  // Memory: the model's share on each Mac, against what exo says is available there.
  for (const [id, share] of offer.shareByNode) {
    const available = cluster.nodes.get(id)?.memoryAvailableBytes ?? null;
    if (available !== null && share + headroom > available)
      throw new NodeError(
        'launch_failed',
        `${labelOf(labels, id)} has ${formatMemory(available)} available; ${lost.model} needs ${formatMemory(share)} there plus ${formatMemory(headroom)} headroom`,
        409,
      );
  }

  const nodeIds = [...offer.shareByNode.keys()];
  // Fast synch: a second ring model on a Mac whose fast synch is on.
  if (offer.instance.instanceType !== 'jaccl' && !options.acknowledgeRisk) {
    for (const id of nodeIds) {
      const fast = options.fastSynchOf(id);
      if (!fast.enabled) continue;
      const rings = [...cluster.instances.values()].filter(
        (i) =>
          i.instanceId !== replaced &&
          i.instanceType === 'ring' &&
          i.shards.some((s) => s.nodeId === id && !GONE_STATUSES.has(cluster.runners.get(s.runnerId)?.tag ?? '')),
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

  await options.replacing?.stop();
  const created = await exoCall(url, 'POST', '/instance', { instance: offer.tagged });
  if (created.status !== 200) throw new NodeError('launch_failed', `exo refused to create the instance of ${lost.model}: ${created.message}`, 502);
  return { model: lost.model, instanceId: offer.instance.instanceId, nodes: nodeIds.map((id) => labelOf(labels, id)), alreadyPlaced: false };
}

/** Every Mac it ran on is back: exo's placement with the lost instance's kind, sharding and Mac count. */
async function asBefore(options: PlaceAgainOptions, lostWhere: string, size: (answer: unknown) => Promise<number | null>): Promise<Offer> {
  const { url, lost } = options;
  const query = new URLSearchParams({
    model_id: lost.model,
    sharding: lost.placement.sharding ?? 'Pipeline',
    instance_meta: lost.placement.instanceType === 'jaccl' ? 'MlxJaccl' : 'MlxRing',
    min_nodes: String(lost.placement.nodeCount),
  });
  const answer = await exoCall(url, 'GET', `/instance/placement?${query}`);
  if (answer.status !== 200) throw new NodeError('launch_failed', `exo cannot place ${lost.model} as before (${lostWhere}): ${answer.message}`, 409);
  const instance = parseInstances({ placement: answer.json }).entries?.get('placement');
  if (!instance) throw new NodeError('launch_failed', `exo answered a placement of ${lost.model} that exobar cannot read`, 502);
  const bytes = await size(answer.json);
  const nodeIds = instance.shards.flatMap((s) => (s.nodeId ? [s.nodeId] : []));
  return { tagged: answer.json, instance, shareByNode: new Map(nodeIds.map((id) => [id, bytes === null ? 0 : bytes / Math.max(1, nodeIds.length)])) };
}

/**
 * A Mac it ran on has left: exo's previews over the Macs that remain, the lost kind
 * first, then the fewest Macs, and the first whose every Mac has its share free plus
 * headroom. None fits: a refusal that names each Mac that remains and what it lacks.
 */
async function onTheMacsThatRemain(
  options: PlaceAgainOptions,
  cluster: ExoCluster,
  headroom: number,
  lostWhere: string,
  size: (answer: unknown) => Promise<number | null>,
): Promise<Offer> {
  const { url, lost } = options;
  const labels = nodeLabels(cluster.nodes);
  const answer = await exoCall(url, 'GET', `/instance/previews?${new URLSearchParams({ model_id: lost.model })}`);
  const parsed = answer.status === 200 ? PreviewsSchema.safeParse(answer.json) : null;
  if (!parsed?.success)
    throw new NodeError('launch_failed', `exo's placement preview for ${lost.model} could not be read (${answer.status}: ${answer.message})`, 502);
  const wanted = lost.placement.instanceType === 'jaccl' ? 'MlxJaccl' : 'MlxRing';
  const offers: Offer[] = [];
  for (const preview of parsed.data.previews) {
    if (!preview.instance || preview.error) continue;
    const instance = parseInstances({ preview: preview.instance }).entries?.get('preview');
    const nodeIds = instance?.shards.flatMap((s) => (s.nodeId ? [s.nodeId] : [])) ?? [];
    if (!instance || nodeIds.length === 0 || nodeIds.some((id) => !cluster.nodes.has(id))) continue;
    const bytes = preview.memory_delta_by_node ? null : await size(preview.instance);
    const shareByNode = new Map(nodeIds.map((id) => [id, preview.memory_delta_by_node?.[id] ?? (bytes === null ? 0 : bytes / nodeIds.length)]));
    offers.push({ tagged: preview.instance, instance, shareByNode });
  }
  const kindOf = (o: Offer) => (o.instance.kind === `${wanted}Instance` ? 0 : 1);
  offers.sort((a, b) => kindOf(a) - kindOf(b) || a.shareByNode.size - b.shareByNode.size);
  const fits = (o: Offer) => [...o.shareByNode].every(([id, share]) => share + headroom <= (cluster.nodes.get(id)?.memoryAvailableBytes ?? Infinity));
  const chosen = offers.find(fits);
  if (chosen) return chosen;

  // Nothing fits: each Mac that remains, what it has and what the model needs there alone.
  const whole = (await size(offers[0]?.tagged ?? null)) ?? null;
  const remain = [...cluster.nodes.keys()];
  const lacks = remain.map((id) => {
    const available = cluster.nodes.get(id)?.memoryAvailableBytes ?? null;
    if (whole === null || available === null) return `${labelOf(labels, id)}: its free memory or the model's size is unknown`;
    const missing = whole + headroom - available;
    return (
      `${labelOf(labels, id)} has ${formatMemory(available)} available, the whole model needs ${formatMemory(whole)} plus ${formatMemory(headroom)} headroom` +
      (missing > 0 ? ` (${formatMemory(missing)} missing)` : '')
    );
  });
  const split = offers.length > 0 && remain.length > 1 ? ' No split across them fits either.' : '';
  throw new NodeError(
    'launch_failed',
    `${lost.model} cannot be placed again on the ${remain.length === 1 ? 'Mac that remains' : 'Macs that remain'} (${remain.map((id) => labelOf(labels, id)).join(', ')}): ` +
      `${lacks.join('; ')}.${split} (${lostWhere}.) Free memory there, or bring the Mac that left back.`,
    409,
  );
}
