/**
 * An instance as the snapshot shows it: runner, fast synch, the queue with each
 * request's phase and age, prefill progress with an estimate of the time left, pending
 * cancellations, TTFT and throughput. Pure: it reads, never changes.
 */
import type { CatalogModel } from '../../../shared/catalog';
import type { FastSynchDecision } from '../../../shared/fast-synch-policy';
import type { FastSynchOverride, InstanceType, LocalInstanceSnapshot, PrefillSnapshot, TtftSnapshot } from '../../../shared/snapshot';
import type { RunnerSupervisor } from '../supervisor/runner-supervisor';
import type { NodeRequest } from './node-request';
import type { RunnerEngineSnapshot } from '../../../shared/runner-engine-view';

export interface InstanceView {
  id: string;
  model: CatalogModel;
  instanceType: InstanceType;
  override: FastSynchOverride;
  decision: FastSynchDecision;
  supervisor: Pick<
    RunnerSupervisor,
    'runnerState' | 'runnerStatus' | 'pid' | 'restarts' | 'restartAt' | 'lastExit' | 'attention' | 'malformedLines' | 'reportedFastSynch' | 'pendingCancels'
  >;
  queueCapacity: number;
  /** Requests admitted and not ended, oldest first. */
  requests: NodeRequest[];
  requestForTask(taskId: string): NodeRequest | undefined;
  ttft: TtftSnapshot;
  tokensPerSecond: number | null;
  counters: LocalInstanceSnapshot['counters'];
  residency: LocalInstanceSnapshot['residency'];
  sharing: LocalInstanceSnapshot['sharing'];
  /** The runner's schedule and prompt cache; null before its hello. */
  runnerEngine: RunnerEngineSnapshot | null;
}

export function buildInstanceSnapshot(view: InstanceView, now: number): LocalInstanceSnapshot {
  const s = view.supervisor;
  const prefilling = view.requests.find((r) => r.phase === 'prefilling' && r.prefillTotal > 0) ?? null;
  return {
    source: 'local',
    id: view.id,
    model: view.model.id,
    modelName: view.model.name,
    engine: view.model.engine,
    simulated: view.model.simulated,
    instanceType: view.instanceType,
    runner: {
      state: s.runnerState,
      status: s.runnerStatus,
      pid: s.pid,
      restarts: s.restarts,
      restartAt: s.runnerState === 'restarting' ? s.restartAt : null,
      lastExit: s.lastExit,
      attention: s.attention,
      malformedLines: s.malformedLines,
    },
    fastSynch: {
      override: view.override,
      enabled: view.decision.enabled,
      reason: view.decision.reason,
      reported: s.reportedFastSynch,
    },
    queue: {
      capacity: view.queueCapacity,
      requests: view.requests.map((r) => ({
        id: r.id,
        phase: r.phase,
        ageMs: now - r.arrivedAt,
        promptTokens: r.promptTokens,
        completionTokens: r.completionTokens,
        ...r.decode.stats(),
      })),
    },
    prefill: prefilling ? prefillSnapshot(prefilling, now) : null,
    pendingCancels: [...s.pendingCancels.values()].flatMap((c) => {
      const request = view.requestForTask(c.taskId);
      return request ? [{ requestId: request.id, state: c.state, ageMs: now - c.since }] : [];
    }),
    ttft: view.ttft,
    tokensPerSecond: view.tokensPerSecond,
    counters: { ...view.counters },
    residency: view.residency,
    sharing: view.sharing,
    runnerEngine: view.runnerEngine,
  };
}

/** Progress of the prompt being prefilled; the time left assumes the rate seen so far. */
function prefillSnapshot(request: NodeRequest, now: number): PrefillSnapshot {
  const elapsed = request.prefillEndAt !== null && request.acknowledgedAt !== null ? request.prefillEndAt - request.acknowledgedAt : 0;
  const rate = elapsed > 0 ? request.prefillProcessed / elapsed : 0;
  const left = request.prefillTotal - request.prefillProcessed;
  return {
    requestId: request.id,
    processedTokens: request.prefillProcessed,
    totalTokens: request.prefillTotal,
    etaMs: rate > 0 ? Math.max(0, left / rate - (now - request.prefillEndAt!)) : null,
  };
}
