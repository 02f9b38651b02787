/**
 * The cluster's events over time: each reading of exo's state is compared with the one
 * before (diff-cluster-states.ts) and what changed is numbered and kept, newest last,
 * bounded. Two things need memory across readings:
 *
 * - A cause seen later. exobar reads instances twice a second but the node sections
 *   every 5 s, so an instance exo deleted because its Mac left can vanish before the
 *   Mac does in exobar's reading. Such a deletion waits (unpublished) until a later
 *   reading of the nodes says whether a Mac it used left; only then is it "not
 *   through exobar".
 * - A recovery. exo never moves a failed runner back: a model recovers when an
 *   instance of it is served again, often through a new instance, placed later.
 */
import type { ExoClusterEvent } from '../../../../shared/exo-cluster-events';
import { SERVING_STATUSES } from '../attach/exo-view';
import { deletionChange, diffClusterStates, type ClusterChange, type ClusterState, type GoneNode } from './diff-cluster-states';
import { exoOwnActions, type ExoOwnActions } from './exo-own-actions';
import { labelOf, nodeLabels } from './node-labels';

export interface ClusterEventLogOptions {
  /** Events kept (the bundle has them all; the snapshot the newest few). */
  limit?: number;
  /** Longest wait for the node sections to explain a deletion (default 12 s: two slow polls and a bit). */
  causeWaitMs?: number;
  /** How long a Mac that left still explains the deletion of an instance that used it (default 60 s). */
  goneMemoryMs?: number;
  ownActions?: ExoOwnActions;
}

/** A reading, and when its node sections were last read (they are polled less often). */
export interface ClusterReading extends ClusterState {
  nodesAt: number;
}

export class ClusterEventLog {
  private prev: ClusterReading | null = null;
  private readonly kept: ExoClusterEvent[] = [];
  private pending: ClusterChange[] = [];
  private readonly recentlyGone = new Map<string, GoneNode>();
  /** Models with a failed runner, waiting to be served again. */
  private readonly failedModels = new Set<string>();
  private seq = 0;
  private readonly limit: number;
  private readonly causeWaitMs: number;
  private readonly goneMemoryMs: number;
  private readonly ownActions: ExoOwnActions;

  constructor(options: ClusterEventLogOptions = {}) {
    this.limit = options.limit ?? 500;
    this.causeWaitMs = options.causeWaitMs ?? 12_000;
    this.goneMemoryMs = options.goneMemoryMs ?? 60_000;
    this.ownActions = options.ownActions ?? exoOwnActions;
  }

  /** Every event kept, oldest first. */
  events(): ExoClusterEvent[] {
    return [...this.kept];
  }

  /** Takes in one reading; returns the events it published (the first reading is the baseline: none). */
  observe(reading: ClusterReading): ExoClusterEvent[] {
    const prev = this.prev;
    this.prev = reading;
    if (!prev) return [];
    for (const [id, gone] of this.recentlyGone) if (reading.at - gone.at > this.goneMemoryMs) this.recentlyGone.delete(id);
    // Twice a second the reading is mostly the very maps of the one before: nothing to diff.
    const { changes, gone } = sameCluster(prev, reading)
      ? NO_DIFF
      : diffClusterStates(prev, reading, {
          byExobar: (kind, instanceId) => this.ownActions.did(kind, instanceId),
          recentlyGone: this.recentlyGone,
        });
    const waiting = [...this.pending, ...changes.filter((c) => c.tentative)];
    // exo deletes an instance only once a Mac it used is gone from its topology: a Mac
    // seen gone after instances it carried vanished had left by then.
    for (const [id, node] of gone) {
      const first = Math.min(node.at, ...waiting.filter((w) => w.nodes.some((n) => n.nodeId === id)).map((w) => w.at));
      if (first < node.at) {
        for (const change of changes) if (change.at === node.at && change.nodes.some((n) => n.nodeId === node.node.nodeId)) change.at = first;
        node.at = first;
      }
      this.recentlyGone.set(id, node);
    }
    const ready: ClusterChange[] = changes.filter((c) => !c.tentative);
    // Deletions waiting for a cause: explained by a Mac that left since, or published once the nodes were read after them.
    const still: ClusterChange[] = [];
    for (const w of waiting) {
      const explained = deletionChange(w.at, w.instanceId!, w.model!, w.nodes, (id) => this.recentlyGone.get(id), false);
      if (!explained.tentative) ready.push(explained);
      else if (reading.nodesAt > w.at || reading.at - w.at > this.causeWaitMs) ready.push(strip(explained));
      else still.push(explained);
    }
    this.pending = still;
    ready.push(...this.recoveries(reading, changes));
    // Stable: at equal times a Mac's leaving comes before the deletions it caused.
    ready.sort((a, b) => a.at - b.at);
    const published = ready.map((change) => this.keep(strip(change)));
    return published;
  }

  /** Models with a failed runner that an instance serves again now; failures seen now start waiting. */
  private recoveries(reading: ClusterReading, changes: ClusterChange[]): ClusterChange[] {
    const out: ClusterChange[] = [];
    if (this.failedModels.size === 0 && changes.length === 0) return out;
    const labels = nodeLabels(reading.nodes);
    for (const model of this.failedModels) {
      const serving = [...reading.instances.values()].find(
        (i) => i.modelId === model && i.shards.length > 0 && i.shards.every((s) => SERVING_STATUSES.has(reading.runners.get(s.runnerId)?.tag ?? '')),
      );
      if (!serving) continue;
      this.failedModels.delete(model);
      const nodes = serving.shards.flatMap((s) =>
        s.nodeId === null
          ? []
          : [
              {
                nodeId: s.nodeId,
                name: reading.nodes.get(s.nodeId)?.name ?? null,
                label: labelOf(labels, s.nodeId),
                lastSeenAt: reading.nodes.get(s.nodeId)?.lastSeenAt ?? null,
              },
            ],
      );
      out.push({
        at: reading.at,
        kind: 'runner_recovered',
        nodes,
        model,
        instanceId: serving.instanceId,
        cause: null,
        causeNodes: [],
        loss: false,
        summary: `${model.split('/').pop() ?? model} is served again, on ${nodes.map((n) => n.label).join(' and ')}`,
      });
    }
    for (const change of changes) if (change.kind === 'runner_failed' && change.model) this.failedModels.add(change.model);
    return out;
  }

  /** Keeps an event seen outside exo's state (a Mac's own exo answering on its own: cluster-split/). */
  add(change: ClusterChange): ExoClusterEvent {
    return this.keep(strip(change));
  }

  private keep(change: ClusterChange): ExoClusterEvent {
    const event: ExoClusterEvent = { id: `e${++this.seq}`, ...change };
    this.kept.push(event);
    if (this.kept.length > this.limit) this.kept.splice(0, this.kept.length - this.limit);
    return event;
  }
}

const NO_DIFF: { changes: ClusterChange[]; gone: Map<string, GoneNode> } = { changes: [], gone: new Map() };

/**
 * True when `next` can hold no change from `prev`: the same instance and runner maps
 * (the client keeps a section's map while exo sends the same bytes), the same attached
 * node id, and the same Macs (their facts matter to events only when Macs come or go).
 */
function sameCluster(prev: ClusterReading, next: ClusterReading): boolean {
  if (prev.instances !== next.instances || prev.runners !== next.runners || prev.attachedNodeId !== next.attachedNodeId) return false;
  if (prev.nodes === next.nodes) return true;
  if (prev.nodes.size !== next.nodes.size) return false;
  for (const id of next.nodes.keys()) if (!prev.nodes.has(id)) return false;
  return true;
}

function strip(change: ClusterChange): ClusterChange {
  const { tentative: _, ...rest } = change;
  return rest;
}
