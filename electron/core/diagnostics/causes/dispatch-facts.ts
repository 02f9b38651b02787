/**
 * What both dispatch causes (waiting_for_runner, node_dispatch_delay) read about the
 * gap between a request's arrival and its write to the runner.
 */
import type { RunnerStatusKind } from '../../../../shared/runner-protocol';
import { isServingStatus } from '../../../../shared/instance-state';
import type { RequestTimeline } from '../../node/node-types';
import type { DiagnosisContext } from '../diagnosis-context';
import { statusesDuring } from '../event-index';

/** Dispatch gaps shorter than this are scheduling noise, not waiting. */
const DISPATCH_NOISE_MS = 5;

/** The runner's side of a request's dispatch gap. */
export interface DispatchFacts {
  /** The dispatch, or now for a request never written. */
  end: number;
  dispatchMs: number;
  /** Runner statuses that held during the gap. */
  statuses: RunnerStatusKind[];
  /** Those of them in which the runner could not take the task. */
  notReady: RunnerStatusKind[];
  /** The same runner's requests already written and not ended when this one arrived. */
  inFlightAtArrival: number;
  /** A slot freed just before the dispatch: the node held it back at its in-flight cap. */
  freedSlot: boolean;
}

/** Measures the dispatch gap of `t` against its runner's statuses and its siblings. */
export function dispatchFacts(ctx: DiagnosisContext, t: RequestTimeline, dispatchMs: number): DispatchFacts {
  const end = t.dispatchedAt ?? ctx.opts.now;
  const statuses = statusesDuring(ctx.history.get(t.instanceId), t.arrivedAt, end);
  const siblings = (ctx.byInstance.get(t.instanceId) ?? []).filter((o) => o !== t);
  const inFlightAtArrival = siblings.filter((o) => o.dispatchedAt !== null && o.dispatchedAt <= t.arrivedAt && (o.endedAt ?? Infinity) > t.arrivedAt).length;
  const freedSlot =
    t.dispatchedAt !== null && siblings.some((o) => o.endedAt !== null && o.endedAt <= t.dispatchedAt! && t.dispatchedAt! - o.endedAt <= DISPATCH_NOISE_MS);
  return { end, dispatchMs, statuses, notReady: statuses.filter((s) => !isServingStatus(s)), inFlightAtArrival, freedSlot };
}
