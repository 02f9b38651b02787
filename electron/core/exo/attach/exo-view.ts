/**
 * What attach mode hands to the snapshot: the `exo` section, the exo instances (the
 * fields of the snapshot's `source: "exo"` instance variant) and the warnings. Kept in
 * the core's own types so wiring them into shared/snapshot.ts is a thin step.
 */
import { EXO_RUNNER_STATUSES, type ExoInstanceDetail, type ExoSection } from '../../../../shared/exo-snapshot';
import type { InstanceType, PendingCancelSnapshot, PrefillSnapshot, RequestSnapshot, TtftSnapshot } from '../../../../shared/snapshot';
import type { InstanceSharing } from '../../../../shared/sharing';

/** One exo instance, with exactly the fields of the snapshot's exo instance variant. */
export interface ExoInstanceView {
  /** exobar's id for it: stable across exo restarts (matched by model), e.g. "exo:mlx-community/Qwen3-30B-A3B-4bit". */
  id: string;
  model: string;
  modelName: string;
  instanceType: InstanceType;
  /** exo does not publish its batch size to the state: capacity is null. */
  queue: { capacity: number | null; requests: RequestSnapshot[] };
  /** Prefill progress is only seen for streams exobar proxies (none yet): null. */
  prefill: PrefillSnapshot | null;
  pendingCancels: PendingCancelSnapshot[];
  ttft: TtftSnapshot;
  tokensPerSecond: number | null;
  /** Decode alone and beside neighbours on its Macs; empty until exobar proxies its traffic. */
  sharing: InstanceSharing;
  source: 'exo';
  exo: ExoInstanceDetail;
}

export type ExoWarningCode =
  | 'two_ring_fast_synch'
  | 'ring_fast_synch_beside_jaccl'
  | 'two_jaccl_shared_gpu'
  | 'exo_runner_failed'
  | 'exo_node_lost'
  | 'exo_stuck_loading'
  | 'exo_unreachable'
  | 'exo_cancelled_still_running'
  | 'exo_instance_without_runner'
  | 'exo_load_stalled'
  | 'exo_model_lost'
  | 'exo_cluster_split';

/** A warning about the exo cluster, in the snapshot's Warning shape. */
export interface ExoWarning {
  code: ExoWarningCode;
  /** exobar ids of the instances involved. */
  instanceIds: string[];
  title: string;
  risk: string;
  fix: string;
  /** True when the warning rests on exo's default rather than a value exobar read (fast synch on a Mac exobar cannot see). */
  assumed?: boolean;
  /** The model a model-level warning is about (exo_model_lost: what Place again places). */
  model?: string;
}

export interface ExoView {
  section: ExoSection;
  instances: ExoInstanceView[];
  warnings: ExoWarning[];
}

/** Thresholds of the exo warnings, settings-like. */
export interface ExoWarningOptions {
  /** A node whose lastSeen has not moved for this long is lost (exo's master times nodes out at 30 s). */
  nodeLostMs: number;
  /** An instance whose runners stay loading this long is stuck. */
  stuckLoadingMs: number;
  /** While exo does not answer, its last known instances are still shown this long. */
  staleInstancesMs: number;
  /** An instance with no working runner on some Mac for this long is one exo forgot to remove (a runner restarting takes less). */
  withoutRunnerMs: number;
}

export const DEFAULT_EXO_WARNING_OPTIONS: ExoWarningOptions = {
  nodeLostMs: 30_000,
  stuckLoadingMs: 10 * 60_000,
  staleInstancesMs: 30_000,
  withoutRunnerMs: 5_000,
};

/** Runner statuses on the way to Ready: exo's list up to RunnerWarmingUp (exo 0.3.70, src/exo/shared/types/worker/runners.py). */
export const LOADING_STATUSES: ReadonlySet<string> = new Set(EXO_RUNNER_STATUSES.slice(0, EXO_RUNNER_STATUSES.indexOf('RunnerReady')));

/** Runner statuses that take requests. */
export { SERVING_STATUSES } from '../../../../shared/instance-state';
