/**
 * Maps exo's parsed state (and what the tracker learned over time) to the snapshot's
 * shapes: one instance per exo instance with its per-node runner rows, queue and
 * pending cancellations, and the cluster's nodes. Runners are always read through
 * `instances[*].shardAssignments` (stale RunnerFailed entries outlive their instance
 * in `runners`, exo 0.3.70's src/exo/shared/apply.py).
 */
import type { ExoClusterEvent } from '../../../../shared/exo-cluster-events';
import type { ExoFastSynch, ExoNodeSnapshot, ExoPendingCancel, ExoRunnerSnapshot, ExoSection, ExoTaskSnapshot } from '../../../../shared/exo-snapshot';
import type { PendingCancelSnapshot, RequestSnapshot } from '../../../../shared/snapshot';
import type { ExoConnectionState, ExoReading } from './exo-client';
import { labelOf, nodeLabels } from '../cluster-events/node-labels';
import type { ExoTracker } from './exo-tracker';
import { SERVING_STATUSES, type ExoInstanceView } from './exo-view';
import type { ExoInstance, ExoNodeFacts, ExoRunnerStatus, ExoTask } from './parse-exo-state';
import { NO_DECODE } from '../../sharing/decode-timing';
import { emptySharing } from '../../../../shared/sharing';
import { SHARING_WINDOW_MS } from '../../sharing/sharing-stats';

/** Tasks that are a model's queue (tasks.py:24-30; master/main.py:183-244). */
const QUEUED = new Set(['Pending', 'Running']);

export interface MapContext {
  now: number;
  connection: ExoConnectionState;
  reading: ExoReading;
  tracker: ExoTracker;
  /** Fast synch of the attached node read from exo's log on this Mac; null when unknown or exo is elsewhere. */
  attachedFastSynch: boolean | null;
}

/** This Mac's value when exobar read it; otherwise exo's default (on), marked assumed. */
function fastSynchOf(isAttached: boolean, ctx: MapContext): ExoFastSynch {
  if (isAttached && ctx.attachedFastSynch !== null) return { enabled: ctx.attachedFastSynch, source: 'exo_log' };
  return { enabled: true, source: 'assumed' };
}

/** The cluster's Macs, attached node first, then by name. */
export function mapNodes(ctx: MapContext): ExoNodeSnapshot[] {
  const labels = nodeLabels(ctx.reading.nodes ?? []);
  const nodes = [...(ctx.reading.nodes ?? new Map<string, ExoNodeFacts>())].map(([nodeId, facts]) => {
    const isAttachedNode = nodeId === ctx.connection.nodeId;
    return {
      nodeId,
      name: facts.name,
      label: labelOf(labels, nodeId),
      chip: facts.chip,
      model: facts.model,
      memoryTotalBytes: facts.memoryTotalBytes,
      memoryAvailableBytes: facts.memoryAvailableBytes,
      gpuUsage: facts.gpuUsage,
      lastSeenAt: facts.lastSeenAt,
      isAttachedNode,
      fastSynch: fastSynchOf(isAttachedNode, ctx),
      // Filled in by the monitor, which follows the bytes over time (downloads/exo-download-progress.ts).
      downloads: [],
    };
  });
  return nodes.sort((a, b) => Number(b.isAttachedNode) - Number(a.isAttachedNode) || a.label.localeCompare(b.label));
}

function runnerRow(shard: ExoInstance['shards'][number], status: ExoRunnerStatus | undefined, ctx: MapContext, labels: Map<string, string>): ExoRunnerSnapshot {
  const nodeName = shard.nodeId ? (ctx.reading.nodes?.get(shard.nodeId)?.name ?? null) : null;
  return {
    runnerId: shard.runnerId,
    nodeId: shard.nodeId ?? 'unknown',
    nodeName,
    nodeLabel: shard.nodeId ? labelOf(labels, shard.nodeId) : 'an unknown Mac',
    rank: shard.rank,
    // "missing": the instance names the runner but exo's runners map has no status for it.
    status: status?.tag ?? 'missing',
    known: status ? status.known : true,
    layersLoaded: status?.layersLoaded ?? null,
    totalLayers: status?.totalLayers ?? null,
    errorMessage: status?.errorMessage ?? null,
    diagnostics: status?.diagnostics ?? [],
    statusSince: ctx.tracker.runnerStatusSince(shard.runnerId) ?? ctx.now,
  };
}

function age(ctx: MapContext, since: number | null): number {
  return Math.max(0, ctx.now - (since ?? ctx.now));
}

function mapInstance(
  instance: ExoInstance,
  tasks: ExoTask[],
  cancelTasks: Map<string, ExoTask[]>,
  ctx: MapContext,
  labels: Map<string, string>,
): ExoInstanceView {
  const runners = instance.shards.map((shard) => runnerRow(shard, ctx.reading.runners?.get(shard.runnerId), ctx, labels));
  const ready = runners.length > 0 && runners.every((r) => SERVING_STATUSES.has(r.status));
  const mine = tasks.filter((t) => t.instanceId === instance.instanceId);
  const byAge = (a: ExoTask, b: ExoTask) => (ctx.tracker.taskFirstSeen(a.taskId) ?? 0) - (ctx.tracker.taskFirstSeen(b.taskId) ?? 0);
  const queued: ExoTaskSnapshot[] = mine
    .filter((t) => QUEUED.has(t.status))
    .sort(byAge)
    .map((t) => ({
      taskId: t.taskId,
      commandId: t.commandId,
      status: t.status,
      // exo marks only the first task a Ready runner picks up Running: a Pending task
      // on a serving runner may be decoding in its batch, so it counts as in the runner.
      place: t.status === 'Running' || ready ? 'in_runner' : 'waiting_for_load',
      ageMs: age(ctx, ctx.tracker.taskFirstSeen(t.taskId)),
      observed: false,
    }));
  const cancels: ExoPendingCancel[] = [];
  const cancelStates: PendingCancelSnapshot['state'][] = [];
  for (const t of mine.filter((x) => x.status === 'Cancelled').sort(byAge)) {
    const workers = cancelTasks.get(t.taskId) ?? [];
    if (workers.some((c) => c.status === 'Complete')) continue;
    cancels.push({ taskId: t.taskId, commandId: t.commandId, ageMs: age(ctx, ctx.tracker.taskStatusSince(t.taskId)) });
    // held: no CancelTask yet; sent: the worker's CancelTask is on its way to the runner.
    cancelStates.push(workers.length > 0 ? 'sent' : 'held');
  }
  const id = ctx.tracker.exobarId(instance.instanceId) ?? { id: `exo:${instance.modelId}`, matchedByModel: false };
  const requests: RequestSnapshot[] = queued.map((t) => ({
    id: t.commandId ?? t.taskId,
    phase: t.place === 'waiting_for_load' ? 'queued' : 'decoding',
    ageMs: t.ageMs,
    promptTokens: 0,
    completionTokens: 0,
    // exo's own tasks carry no token times: exobar saw none of them.
    ...NO_DECODE,
  }));
  return {
    id: id.id,
    model: instance.modelId,
    modelName: instance.modelId.split('/').pop() ?? instance.modelId,
    // An instance kind exo 0.3.70 does not have is shown as exo's default kind, ring (kindKnown: false says so).
    instanceType: instance.instanceType ?? 'ring',
    queue: { capacity: null, requests },
    prefill: null,
    pendingCancels: cancels.map((c, i) => ({ requestId: c.commandId ?? c.taskId, state: cancelStates[i]!, ageMs: c.ageMs })),
    ttft: { samples: [], p50Ms: null, p95Ms: null, latest: null },
    tokensPerSecond: null,
    sharing: emptySharing(SHARING_WINDOW_MS, 'proxied'),
    source: 'exo',
    exo: {
      exoInstanceId: instance.instanceId,
      kind: instance.kind,
      kindKnown: instance.known,
      matchedByModel: id.matchedByModel,
      sharding: instance.sharding,
      runners,
      tasks: queued,
      pendingCancels: cancels,
      endedTasks: ctx.tracker.endedTasks(id.id),
      // Filled in by the monitor, which follows it over time (ghost/exo-ghost-tracker.ts).
      ghostGeneration: null,
    },
  };
}

/** Every exo instance in the reading, in exobar id order. */
export function mapInstances(ctx: MapContext): ExoInstanceView[] {
  const tasks = [...(ctx.reading.tasks?.values() ?? [])];
  const cancelTasks = new Map<string, ExoTask[]>();
  for (const t of tasks) {
    if (t.kind !== 'CancelTask' || !t.cancelledTaskId) continue;
    cancelTasks.set(t.cancelledTaskId, [...(cancelTasks.get(t.cancelledTaskId) ?? []), t]);
  }
  const labels = nodeLabels(ctx.reading.nodes ?? []);
  const generation = tasks.filter((t) => t.kind === 'TextGeneration');
  return [...(ctx.reading.instances?.values() ?? [])].map((i) => mapInstance(i, generation, cancelTasks, ctx, labels)).sort((a, b) => a.id.localeCompare(b.id));
}

/** The snapshot's top-level `exo` section (`events`: the cluster's latest events). */
export function mapSection(ctx: MapContext, nodes: ExoNodeSnapshot[], events: ExoClusterEvent[] = []): ExoSection {
  const c = ctx.connection;
  return {
    url: c.url,
    connected: c.connected,
    since: c.since,
    nodeId: c.nodeId,
    nodes,
    lastGoodPollAt: c.lastGoodPollAt,
    lastError: c.lastError ? { message: c.lastError.message, at: c.lastError.at } : null,
    pollErrors: c.pollErrors,
    parseErrors: c.parseErrors,
    unknownTags: c.unknownTags,
    restartedAt: c.restartedAt,
    events,
  };
}
