/**
 * The exo causes the diagnosis names in attach mode: a failed runner with exo's typed
 * diagnostics (RunnerMetalGpuTimeout, ring socket errors), a node lost, two models (of
 * any instance type) on one Mac with fast synch on (assumed or read), an instance stuck loading, exo
 * itself not answering, and for the requests exobar proxies, exo's dispatch stall
 * (a model waiting behind another model's prefill on one Mac) and a silent runner, a cancelled request exo's runner keeps generating, and a Mac that split off into a cluster of its own. Read from the snapshot's exo part, which holds what exobar saw.
 */
import { exoInstances } from '../../../shared/instance-state';
import type { Snapshot, WarningCode } from '../../../shared/snapshot';

export interface ExoCause {
  cause: Extract<
    WarningCode,
    | 'exo_runner_failed'
    | 'exo_node_lost'
    | 'two_ring_fast_synch'
    | 'ring_fast_synch_beside_jaccl'
    | 'two_jaccl_shared_gpu'
    | 'exo_stuck_loading'
    | 'exo_unreachable'
    | 'exo_dispatch_stall'
    | 'exo_runner_silent'
    | 'exo_cancelled_still_running'
    | 'exo_instance_without_runner'
    | 'exo_cluster_split'
    | 'exo_load_stalled'
  >;
  /** exobar ids of the exo instances involved. */
  instanceIds: string[];
  /** exo's typed diagnostics behind it (RunnerMetalGpuTimeout, ...), for a failed runner. */
  exoDiagnostics: string[];
  /** True when it rests on exo's default rather than a known value (fast synch on another Mac). */
  assumed: boolean;
  explanation: string;
}

const EXO_CAUSES: ReadonlySet<string> = new Set([
  'exo_runner_failed',
  'exo_node_lost',
  'two_ring_fast_synch',
  'ring_fast_synch_beside_jaccl',
  'two_jaccl_shared_gpu',
  'exo_stuck_loading',
  'exo_unreachable',
  'exo_dispatch_stall',
  'exo_runner_silent',
  'exo_cancelled_still_running',
  'exo_instance_without_runner',
  'exo_cluster_split',
  'exo_load_stalled',
]);

const SHARED_GPU_CODES: ReadonlySet<string> = new Set(['two_ring_fast_synch', 'ring_fast_synch_beside_jaccl', 'two_jaccl_shared_gpu']);

/** The exo causes in the snapshot; empty when nothing is attached. */
export function diagnoseExo(snapshot: Snapshot | null): ExoCause[] {
  if (!snapshot?.exo) return [];
  const exo = exoInstances(snapshot);
  const exoIds = new Set(exo.map((i) => i.id));
  const causes: ExoCause[] = [];
  for (const warning of snapshot.warnings) {
    if (!EXO_CAUSES.has(warning.code)) continue;
    // The shared-GPU warnings also cover local runners: only the exo ones are exo's cause.
    if (SHARED_GPU_CODES.has(warning.code) && !warning.instanceIds.some((id) => exoIds.has(id))) continue;
    const runners = exo.filter((i) => warning.instanceIds.includes(i.id)).flatMap((i) => i.exo.runners);
    const exoDiagnostics =
      warning.code === 'exo_runner_failed'
        ? [...new Set(runners.filter((r) => r.status === 'RunnerFailed').flatMap((r) => r.diagnostics.map((d) => d.kind)))]
        : [];
    causes.push({
      cause: warning.code as ExoCause['cause'],
      instanceIds: warning.instanceIds,
      exoDiagnostics,
      assumed: warning.assumed === true,
      explanation: `${warning.title}. ${warning.risk}`,
    });
  }
  return causes;
}
