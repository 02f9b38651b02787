/**
 * The cluster's changes between two parsed readings of exo's state, as a pure function:
 * Macs that joined or left (a Mac whose node id changed under the same name, or the
 * attached node's id changing, is exo restarting there), instances placed or deleted
 * with their cause when it can be told, runners that failed. exo's own state records
 * none of this: a Mac that left and the instances exo deleted with it are just absent.
 */
import type { ExoClusterEvent, ExoEventNode } from '../../../../shared/exo-cluster-events';
import type { ExoInstance, ExoNodeFacts, ExoRunnerStatus } from '../attach/parse-exo-state';
import type { ExoOwnActionKind } from './exo-own-actions';
import { clockTime } from './event-words';
import { labelOf, nodeLabels } from './node-labels';

/** One reading of the cluster: the parts the events are made of. */
export interface ClusterState {
  /** Epoch ms of the reading. */
  at: number;
  /** The id `/node_id` answered (a new random id on every exo start). */
  attachedNodeId: string | null;
  nodes: Map<string, ExoNodeFacts>;
  instances: Map<string, ExoInstance>;
  runners: Map<string, ExoRunnerStatus>;
}

/** A Mac that left or restarted a moment ago: still the cause of instances exo deletes after it. */
export interface GoneNode {
  node: ExoEventNode;
  at: number;
  restarted: boolean;
}

export interface DiffContext {
  /** Did exobar ask exo for this (the own-actions journal)? */
  byExobar(kind: ExoOwnActionKind, instanceId: string): boolean;
  /** Macs that left or restarted before this reading, by old node id. */
  recentlyGone: ReadonlyMap<string, GoneNode>;
}

/** An event before the log numbers it. `tentative`: cause "other" that a Mac's leaving seen later may still explain. */
export type ClusterChange = Omit<ExoClusterEvent, 'id'> & { tentative?: boolean };

const modelName = (model: string) => model.split('/').pop() ?? model;
const list = (words: string[]) => (words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

function eventNode(nodeId: string, facts: ExoNodeFacts | undefined, labels: Map<string, string>): ExoEventNode {
  return { nodeId, name: facts?.name ?? null, label: labelOf(labels, nodeId), lastSeenAt: facts?.lastSeenAt ?? null };
}

/** Old node id → new node id for Macs where exo restarted: the attached node's id changed, or one id left and one came under the same name. */
function restartPairs(prev: ClusterState, next: ClusterState, gone: string[], added: string[]): Map<string, string> {
  const pairs = new Map<string, string>();
  const a = prev.attachedNodeId;
  const b = next.attachedNodeId;
  if (a !== null && b !== null && a !== b) pairs.set(a, b);
  const byName = (ids: string[], state: ClusterState) => {
    const out = new Map<string, string[]>();
    for (const id of ids) {
      const name = state.nodes.get(id)?.name;
      if (name) out.set(name, [...(out.get(name) ?? []), id]);
    }
    return out;
  };
  const goneByName = byName(
    gone.filter((id) => !pairs.has(id)),
    prev,
  );
  const addedByName = byName(
    added.filter((id) => ![...pairs.values()].includes(id)),
    next,
  );
  for (const [name, ids] of goneByName) {
    const fresh = addedByName.get(name);
    // Only an unambiguous match: one id gone and one new id under that name.
    if (ids.length === 1 && fresh?.length === 1) pairs.set(ids[0]!, fresh[0]!);
  }
  return pairs;
}

export interface ClusterDiff {
  /** Macs first, then instances, then runners. */
  changes: ClusterChange[];
  /** The Macs that left or restarted in this step, by the node id they had (the one instances name). */
  gone: Map<string, GoneNode>;
}

/** Everything that changed from `prev` to `next`. */
export function diffClusterStates(prev: ClusterState, next: ClusterState, ctx: DiffContext): ClusterDiff {
  const at = next.at;
  const changes: ClusterChange[] = [];
  const base = { at, model: null, instanceId: null, cause: null, causeNodes: [] as string[] };

  const gone = [...prev.nodes.keys()].filter((id) => !next.nodes.has(id));
  const added = [...next.nodes.keys()].filter((id) => !prev.nodes.has(id));
  const restarts = restartPairs(prev, next, gone, added);
  // Names are unique or not among the Macs of now and those that just left; a restarted Mac is one Mac, named as it is now.
  const labels = nodeLabels([...next.nodes, ...gone.filter((id) => !restarts.has(id)).map((id) => [id, prev.nodes.get(id)!] as const)]);
  for (const [oldId, newId] of restarts) labels.set(oldId, labelOf(labels, newId));
  const goneHere = new Map<string, GoneNode>();
  for (const [oldId, newId] of restarts) {
    const node = eventNode(newId, next.nodes.get(newId), labels);
    goneHere.set(oldId, { node: eventNode(oldId, prev.nodes.get(oldId), labels), at, restarted: true });
    changes.push({ ...base, kind: 'exo_restarted', nodes: [node], loss: false, summary: `exo restarted on ${node.label} (a new node id)` });
  }
  for (const id of gone.filter((g) => !restarts.has(g))) {
    const node = eventNode(id, prev.nodes.get(id), labels);
    goneHere.set(id, { node, at, restarted: false });
    const seen = node.lastSeenAt === null ? '' : ` (last seen ${clockTime(node.lastSeenAt, true)})`;
    changes.push({ ...base, kind: 'node_left', nodes: [node], loss: true, summary: `${node.label} left the cluster${seen}` });
  }
  const pairedNew = new Set(restarts.values());
  for (const id of added.filter((a) => !pairedNew.has(a))) {
    const node = eventNode(id, next.nodes.get(id), labels);
    changes.push({ ...base, kind: 'node_joined', nodes: [node], loss: false, summary: `${node.label} joined the cluster` });
  }

  const nodesOf = (instance: ExoInstance, state: ClusterState) =>
    instance.shards.flatMap((s) => (s.nodeId === null ? [] : [eventNode(s.nodeId, state.nodes.get(s.nodeId) ?? prev.nodes.get(s.nodeId), labels)]));
  for (const [id, instance] of prev.instances) {
    if (next.instances.has(id)) continue;
    changes.push(
      deletionChange(
        at,
        id,
        instance.modelId,
        nodesOf(instance, prev),
        (nodeId) => goneHere.get(nodeId) ?? ctx.recentlyGone.get(nodeId),
        ctx.byExobar('delete', id),
      ),
    );
  }
  for (const [id, instance] of next.instances) {
    if (prev.instances.has(id)) continue;
    const nodes = nodesOf(instance, next);
    const mine = ctx.byExobar('place', id);
    changes.push({
      at,
      kind: 'instance_placed',
      nodes,
      model: instance.modelId,
      instanceId: id,
      cause: mine ? 'exobar' : 'other',
      causeNodes: [],
      loss: false,
      summary: `${modelName(instance.modelId)} placed on ${list(nodes.map((n) => n.label))} ${mine ? 'through exobar' : '(not through exobar)'}`,
    });
  }

  for (const [id, instance] of next.instances) {
    for (const shard of instance.shards) {
      const now = next.runners.get(shard.runnerId);
      const before = prev.instances.has(id) ? prev.runners.get(shard.runnerId) : undefined;
      if (now?.tag !== 'RunnerFailed' || before?.tag === 'RunnerFailed') continue;
      const node = shard.nodeId === null ? null : eventNode(shard.nodeId, next.nodes.get(shard.nodeId), labels);
      changes.push({
        ...base,
        kind: 'runner_failed',
        nodes: node ? [node] : [],
        model: instance.modelId,
        instanceId: id,
        loss: true,
        summary: `${modelName(instance.modelId)}: the runner on ${node?.label ?? 'an unknown Mac'} (rank ${shard.rank ?? '?'}) failed: ${now.errorMessage ?? 'exo gave no message'}`,
      });
    }
  }
  return { changes, gone: goneHere };
}

/**
 * The event of an instance gone from exo's state, with its cause: exobar deleted it; a
 * Mac it used left (or restarted) moments before, so exo deleted it; or someone else
 * did (tentative: the Mac's leaving may only show in a later reading of the node sections).
 */
export function deletionChange(
  at: number,
  instanceId: string,
  model: string,
  nodes: ExoEventNode[],
  goneOf: (nodeId: string) => GoneNode | undefined,
  byExobar: boolean,
): ClusterChange {
  const where = ` (it ran on ${list(nodes.map((n) => n.label))})`;
  const name = modelName(model);
  const causes = nodes.map((n) => goneOf(n.nodeId)).filter((g): g is GoneNode => g !== undefined);
  const left = causes.filter((c) => !c.restarted);
  const change = { at, kind: 'instance_deleted' as const, nodes, model, instanceId };
  if (byExobar) return { ...change, cause: 'exobar', causeNodes: [], loss: false, summary: `${name} deleted through exobar${where}` };
  if (left.length > 0) {
    const when = list(left.map((c) => `${c.node.label} left at ${clockTime(c.at)}`));
    return { ...change, cause: 'node_left', causeNodes: left.map((c) => c.node.label), loss: true, summary: `${name} deleted by exo after ${when}${where}` };
  }
  if (causes.length > 0) {
    const on = list(causes.map((c) => c.node.label));
    const summary = `${name} deleted by exo after exo restarted on ${on} at ${clockTime(causes[0]!.at)}${where}`;
    return { ...change, cause: 'exo_restarted', causeNodes: causes.map((c) => c.node.label), loss: true, summary };
  }
  return { ...change, cause: 'other', causeNodes: [], loss: true, summary: `${name} deleted, not through exobar${where}`, tentative: true };
}
