/**
 * What exobar knows of an attached exo cluster, as it appears in the one snapshot.
 *
 * exo is the distributed engine; exobar only reads its HTTP API (`/state/*`) and,
 * for traffic routed through exobar, the streams it proxies. These schemas are the
 * contract between the exo client in the core (electron/core/exo/), the views and
 * the diagnostic bundle. Facts exo cannot tell (fast synch on another Mac, TTFT of
 * requests that bypass exobar) are `null` or marked `assumed`, never invented.
 * Sources for every rule: docs/exo.md.
 */
import { z } from 'zod';
import { ExoClusterEventSchema } from './exo-cluster-events';

const epochMs = z.number().finite();

/**
 * exo's runner statuses (exo 0.3.70, src/exo/shared/types/worker/runners.py). A tag
 * exo adds later is kept as it came, with `known: false`, never dropped.
 */
export const EXO_RUNNER_STATUSES = [
  'RunnerIdle',
  'RunnerConnecting',
  'RunnerConnected',
  'RunnerLoading',
  'RunnerLoaded',
  'RunnerWarmingUp',
  'RunnerReady',
  'RunnerRunning',
  'RunnerShuttingDown',
  'RunnerShutdown',
  'RunnerFailed',
] as const;

/** One typed diagnostic exo attached to a failed runner (e.g. RunnerMetalGpuTimeout). */
export const ExoRunnerDiagnosticSchema = z.object({
  /** exo's tag: RunnerMetalGpuTimeout, RunnerRingSocketReceivingError, RunnerRingTransportError, or an unknown one. */
  kind: z.string(),
  /** exo's own message for it, when it carries one. */
  message: z.string().nullable(),
  /** The remaining fields as exo sent them (error numbers, names). */
  details: z.record(z.string(), z.unknown()),
});
export type ExoRunnerDiagnostic = z.infer<typeof ExoRunnerDiagnosticSchema>;

/** One runner of an exo instance: one node's shard of the model. */
export const ExoRunnerSnapshotSchema = z.object({
  runnerId: z.string(),
  nodeId: z.string(),
  /** The node's friendly name (stable across exo restarts, unlike its id); null if exo has not said. */
  nodeName: z.string().nullable(),
  /** How the views name the Mac: its name, with a short node id when two Macs share the name, or "node <id>" without a name. */
  nodeLabel: z.string(),
  /** deviceRank of the runner's shard; null when the shard could not be read. */
  rank: z.number().int().nullable(),
  /** exo's status tag as sent ("RunnerReady"); "missing" when the runner is not in /state/runners. */
  status: z.string(),
  /** False for a tag exo 0.3.70 does not publish (shown as unknown, never an error). */
  known: z.boolean(),
  layersLoaded: z.number().int().nullable(),
  totalLayers: z.number().int().nullable(),
  errorMessage: z.string().nullable(),
  diagnostics: z.array(ExoRunnerDiagnosticSchema),
  /** Epoch ms when exobar first saw the runner in its current status. */
  statusSince: epochMs,
});
export type ExoRunnerSnapshot = z.infer<typeof ExoRunnerSnapshotSchema>;

/** A TextGeneration task of exo's, as read from /state/tasks. */
export const ExoTaskSnapshotSchema = z.object({
  taskId: z.string(),
  /** The command id (the completion id a client sees), when exo's task carries it. */
  commandId: z.string().nullable(),
  /** exo's task status. */
  status: z.string(),
  /**
   * waiting_for_load: the instance's runners are not ready yet; in_runner: exo handed it
   * to a runner (exo's state cannot tell queued-in-batch from decoding).
   */
  place: z.enum(['waiting_for_load', 'in_runner']),
  /** Milliseconds since exobar first saw the task (exo's state carries no creation time). */
  ageMs: z.number().finite(),
  /** True when the request came through exobar, so its phase and TTFT are measured (see requests). */
  observed: z.boolean(),
});
export type ExoTaskSnapshot = z.infer<typeof ExoTaskSnapshotSchema>;

/** A task in status Cancelled whose CancelTask has not completed yet. */
export const ExoPendingCancelSchema = z.object({
  taskId: z.string(),
  commandId: z.string().nullable(),
  ageMs: z.number().finite(),
});
export type ExoPendingCancel = z.infer<typeof ExoPendingCancelSchema>;

/** Where exobar's knowledge of a Mac's fast-synch value comes from. */
export const ExoFastSynchSchema = z.object({
  /** null: nobody knows (no log to read, nothing exobar set). */
  enabled: z.boolean().nullable(),
  /**
   * exobar: exobar started this exo with the value; exo_log: read from exo's own log on
   * this Mac; assumed: exo's default (on), because exo does not publish it.
   */
  source: z.enum(['exobar', 'exo_log', 'assumed']),
});
export type ExoFastSynch = z.infer<typeof ExoFastSynchSchema>;

/**
 * A model download exo runs, has finished or failed on one Mac (exo's DownloadOngoing,
 * DownloadCompleted, DownloadFailed; the pending entry exo lists for every known model
 * card is not a download and never shown). Speed and time left come from the bytes of
 * successive polls; null when unknown.
 */
export const ExoDownloadSnapshotSchema = z.object({
  modelId: z.string(),
  status: z.enum(['ongoing', 'completed', 'failed']),
  downloadedBytes: z.number().nullable(),
  totalBytes: z.number().nullable(),
  /** 0..100. */
  percent: z.number().nullable(),
  bytesPerSecond: z.number().nullable(),
  etaMs: z.number().nullable(),
  /** exo's message, for a failed download. */
  errorMessage: z.string().nullable(),
});
export type ExoDownloadSnapshot = z.infer<typeof ExoDownloadSnapshotSchema>;

/** One Mac of the cluster. */
export const ExoNodeSnapshotSchema = z.object({
  nodeId: z.string(),
  name: z.string().nullable(),
  /** How the views name it: the name, with a short node id when two Macs share the name ("studio (57ebbb)"). */
  label: z.string(),
  /** e.g. "Apple M3 Ultra". */
  chip: z.string().nullable(),
  /** e.g. "Mac Studio". */
  model: z.string().nullable(),
  memoryTotalBytes: z.number().nullable(),
  memoryAvailableBytes: z.number().nullable(),
  /** 0..1, as exo reports it. */
  gpuUsage: z.number().nullable(),
  /** Epoch ms from exo's lastSeen. */
  lastSeenAt: epochMs.nullable(),
  /** True for the node whose API exobar is attached to. */
  isAttachedNode: z.boolean(),
  fastSynch: ExoFastSynchSchema,
  /** Its model downloads (read every 5 s): ongoing, failed, completed. */
  downloads: z.array(ExoDownloadSnapshotSchema).default([]),
});
export type ExoNodeSnapshot = z.infer<typeof ExoNodeSnapshotSchema>;

/** The top-level `exo` section of the snapshot: the attachment itself. */
export const ExoSectionSchema = z.object({
  url: z.string(),
  connected: z.boolean(),
  /** Epoch ms since when `connected` has had its current value. */
  since: epochMs,
  /** The attached node's id (a new random id on every exo start); null before the first answer. */
  nodeId: z.string().nullable(),
  nodes: z.array(ExoNodeSnapshotSchema),
  lastGoodPollAt: epochMs.nullable(),
  lastError: z.object({ message: z.string(), at: epochMs }).nullable(),
  /** Failed polls (unreachable, timeout, HTTP error, not JSON, too large). */
  pollErrors: z.number().int().nonnegative(),
  /** Entries of exo's state that could not be read (each skipped on its own). */
  parseErrors: z.number().int().nonnegative(),
  /** Entries of the latest state carrying a tag exo 0.3.70 does not have (kept, shown as unknown). */
  unknownTags: z.number().int().nonnegative(),
  /** Set when the node id changed: exo restarted and instances were matched by model. */
  restartedAt: epochMs.nullable(),
  /** The cluster's latest events (Macs joined or left, instances placed or deleted, runners failed), oldest first; see exo-cluster-events.ts. */
  events: z.array(ExoClusterEventSchema),
});
export type ExoSection = z.infer<typeof ExoSectionSchema>;

/** An exo found answering on 127.0.0.1:52415 while nothing is attached: the views offer to attach. */
export const ExoOfferSchema = z.object({ url: z.string(), nodeId: z.string(), foundAt: epochMs });
export type ExoOffer = z.infer<typeof ExoOfferSchema>;

/**
 * The exo-only part of an instance with `source: "exo"` (the shared part, queue,
 * prefill, TTFT, is the same as a local instance's; see shared/snapshot.ts).
 */
export const ExoInstanceDetailSchema = z.object({
  /** exo's instance id. */
  exoInstanceId: z.string(),
  /** exo's instance tag as sent (MlxRingInstance, MlxJacclInstance, or a newer one). */
  kind: z.string(),
  /** False for a tag exo 0.3.70 does not have: instanceType is then exo's default, ring. */
  kindKnown: z.boolean(),
  /** True when this exobar id was carried over from an earlier exo instance of the same model (exo restarted). */
  matchedByModel: z.boolean(),
  sharding: z.enum(['Pipeline', 'Tensor']).nullable(),
  runners: z.array(ExoRunnerSnapshotSchema),
  /** exo's generation tasks for this instance, oldest first. */
  tasks: z.array(ExoTaskSnapshotSchema),
  pendingCancels: z.array(ExoPendingCancelSchema),
  /** Tasks that left exo's state since exobar attached (ended, never lost). */
  endedTasks: z.number().int().nonnegative(),
  /**
   * A cancelled request exo's runner goes on generating: exo deleted the task before its
   * runner heard of the cancel, so it stays RunnerRunning with no task (seen for at
   * least a second). `since` is when exobar first saw it; null when there is none.
   */
  ghostGeneration: z.object({ since: epochMs, ageMs: z.number().finite().nonnegative(), nodeIds: z.array(z.string()) }).nullable(),
  /**
   * exobar placed this instance for a request (`exo.placeOnDemand`) and deletes it after
   * its idle time to live: `ttlSeconds` (null: never), `unloadsAt` (epoch ms; null while
   * exobar has a request of it in flight, or never). Absent or null: someone else placed
   * it, and exobar never deletes it by itself.
   */
  placedOnDemand: z.object({ ttlSeconds: z.number().nullable(), unloadsAt: epochMs.nullable() }).nullable().optional(),
});
export type ExoInstanceDetail = z.infer<typeof ExoInstanceDetailSchema>;
