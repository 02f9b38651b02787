/**
 * zod schemas for the parts of exo's State that exobar reads (exo 0.3.70): the body
 * of each tagged instance, shard, runner status, diagnostic and task, and the node
 * facts. Only what exobar uses is declared; every other field passes through
 * untouched (prompt text in `taskParams` is never read). Sources, in exo 0.3.70:
 * src/exo/shared/types/worker/instances.py, runners.py, shards.py, tasks.py,
 * profiling.py, src/exo/worker/runner/diagnostics.py (docs/exo.md "exo source this code follows").
 */
import { z } from 'zod';
import { BytesSchema, exoObject, maybe } from './exo-schema-helpers';
import type { InstanceType } from '../../../../shared/instance-vocabulary';

const int = z.number().int();

export const ShardBodySchema = exoObject({
  deviceRank: maybe(int),
  worldSize: maybe(int),
  startLayer: maybe(int),
  endLayer: maybe(int),
  nLayers: maybe(int),
});

export const InstanceBodySchema = exoObject({
  instanceId: z.string(),
  shardAssignments: exoObject({
    modelId: z.string(),
    runnerToShard: z.record(z.string(), z.unknown()).default({}),
    nodeToRunner: z.record(z.string(), z.string()).default({}),
  }),
});

export const RunnerBodySchema = exoObject({
  layersLoaded: maybe(int),
  totalLayers: maybe(int),
  errorMessage: maybe(z.string()),
  diagnostics: maybe(z.array(z.unknown())),
});

export const DiagnosticBodySchema = exoObject({ message: maybe(z.string()) });

export const TaskBodySchema = exoObject({
  taskId: maybe(z.string()),
  taskStatus: z.string(),
  instanceId: maybe(z.string()),
  commandId: maybe(z.string()),
  cancelledTaskId: maybe(z.string()),
  runnerId: maybe(z.string()),
});

export const NodeIdentitySchema = exoObject({
  friendlyName: maybe(z.string()),
  chipId: maybe(z.string()),
  modelId: maybe(z.string()),
  osVersion: maybe(z.string()),
});

export const NodeMemorySchema = exoObject({
  ramTotal: maybe(BytesSchema),
  ramAvailable: maybe(BytesSchema),
});

export const NodeSystemSchema = exoObject({
  gpuUsage: maybe(z.number()),
  temp: maybe(z.number()),
});

/** lastSeen values: ISO-8601 with `Z` (from /state) or `+00:00` (from /state/{path}). */
export const LastSeenSchema = z.string().transform((text, ctx) => {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: 'custom', message: `not a time: ${text.slice(0, 40)}` });
    return z.NEVER;
  }
  return ms;
});

/** A topology node: a node id, or an object carrying one. */
export const TopologyNodeSchema = z.union([z.string(), exoObject({ nodeId: z.string() }).transform((n) => n.nodeId)]);

/** exo's task statuses (tasks.py:24-30); another is kept as sent and never queued. */
export const EXO_TASK_STATUSES = ['Pending', 'Running', 'Complete', 'TimedOut', 'Failed', 'Cancelled'] as const;

/** exo's task kinds at 0.3.70 (tasks.py:33-103). */
export const EXO_TASK_KINDS = [
  'TextGeneration',
  'CreateRunner',
  'DownloadModel',
  'ConnectToGroup',
  'LoadModel',
  'StartWarmup',
  'Shutdown',
  'CancelTask',
  'ImageGeneration',
  'ImageEdits',
] as const;

/** Instance kinds and the instanceType each means. */
export const EXO_INSTANCE_KINDS: Readonly<Record<string, InstanceType>> = {
  MlxRingInstance: 'ring',
  MlxJacclInstance: 'jaccl',
};

/** Shard kinds and the sharding each means. */
export const EXO_SHARD_KINDS: Readonly<Record<string, 'Pipeline' | 'Tensor'>> = {
  PipelineShardMetadata: 'Pipeline',
  TensorShardMetadata: 'Tensor',
};
