/**
 * What every cause module reads: the node's timelines and events, indexed once, and
 * the request under examination. Cause modules are pure functions of these two, so
 * each can be tested on a hand-built context without the rest of the diagnosis.
 */
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { isEventOf, type NodeEventOf } from '../events/node-event';
import type { DiagnosisOptions, RunnerIncident, TtftParts, Verdict } from './diagnosis-types';
import { failureCodes, incidentsOf, latestFastSynch, prefillProgress, statusHistory, type StatusChange } from './event-index';
import { soloGroups, type SoloComparison, type SoloGroups } from './solo-reference';

/** The node's history as the causes query it. */
export interface DiagnosisContext {
  opts: DiagnosisOptions;
  timelines: readonly RequestTimeline[];
  /** Per instance, its requests in the node's order. */
  byInstance: Map<string, RequestTimeline[]>;
  /** Per instance, its runner's status changes in time order. */
  history: Map<string, StatusChange[]>;
  incidents: RunnerIncident[];
  /** The supervisor's state transitions (restarting, failed, needs_attention, ...). */
  stateChanges: NodeEventOf<'runner_state'>[];
  /** Per failed request, the error code it ended with. */
  codes: Map<string, string>;
  /** Per request, its last prefill progress. */
  progress: Map<string, { processed: number; t: number }>;
  fastSynchOn: string[];
  solo: SoloGroups;
  /** runner_load_stalled as it was raised and cleared: a load that stopped moving (electron/core/node/load-stall/). */
  loadStalls: (NodeEventOf<'warning_raised'> | NodeEventOf<'warning_cleared'>)[];
}

/** One request under examination: where its wait stopped being measured, its parts and its solo comparison. */
export interface ExaminedRequest {
  t: RequestTimeline;
  /** Its first token, its end, or the export's now. */
  until: number;
  parts: TtftParts;
  reference: SoloComparison;
}

/** A cause: its verdict when the request's facts fit it, else null so the next cause is tried. */
export type Cause = (ctx: DiagnosisContext, r: ExaminedRequest) => Verdict | null;
/** The last cause of a chain: it always has a verdict (the catch-all reading of that part). */
export type FallbackCause = (ctx: DiagnosisContext, r: ExaminedRequest) => Verdict;

/** Indexes `events` and `timelines` once for all the causes. */
export function diagnosisContext(timelines: readonly RequestTimeline[], events: readonly NodeEvent[], opts: DiagnosisOptions): DiagnosisContext {
  const byInstance = new Map<string, RequestTimeline[]>();
  for (const t of timelines) {
    const list = byInstance.get(t.instanceId);
    if (list) list.push(t);
    else byInstance.set(t.instanceId, [t]);
  }
  return {
    opts,
    timelines,
    byInstance,
    history: statusHistory(events),
    incidents: incidentsOf(events),
    stateChanges: events.filter(isEventOf('runner_state')),
    codes: failureCodes(events),
    progress: prefillProgress(events),
    fastSynchOn: latestFastSynch(events),
    solo: soloGroups(timelines),
    loadStalls: events.filter(
      (e): e is NodeEventOf<'warning_raised'> | NodeEventOf<'warning_cleared'> =>
        (e.kind === 'warning_raised' || e.kind === 'warning_cleared') && e.data.code === 'runner_load_stalled',
    ),
  };
}

/** When a timeline's request stopped occupying its runner's step with prefill. */
export function prefillEnd(t: RequestTimeline, now: number): number {
  return t.firstTokenAt ?? t.prefillEndAt ?? t.endedAt ?? now;
}

/**
 * The prompt tokens the runner processed and when the last of them was reported: the
 * whole prompt by the first token; else what the last prefill progress said (zero
 * before any), which is all a request cancelled or failed part-way ever cost.
 */
export function processed(ctx: DiagnosisContext, t: RequestTimeline): { tokens: number; at: number | null } {
  if (t.firstTokenAt !== null) return { tokens: t.promptTokens, at: t.firstTokenAt };
  const last = ctx.progress.get(t.requestId);
  return last ? { tokens: Math.min(last.processed, t.promptTokens), at: last.t } : { tokens: 0, at: null };
}
