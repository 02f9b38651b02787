/**
 * The bundle's diagnosis: for every slow time to first token (and every request a
 * runner failure ended), which part of the wait dominated and why, with the numbers
 * behind the verdict. A pure function of the node's request timelines and events.
 *
 * This file only composes: each cause is a module of its own in ./causes/, a pure
 * function of the indexed history (./diagnosis-context.ts) and the request. The causes
 * follow docs/domain.md's two mechanisms and its diagnostic rule:
 * - A runner reads new tasks only between generation steps, and one step holds the
 *   whole prefill of an admitted prompt; so a task written while the same runner is
 *   mid-prefill is acknowledged only when that prefill ends
 *   (`queued_behind_same_model_prefill`).
 * - Two runners share one GPU; a model computes slower while the other one works
 *   (exo measured 0.23 s alone vs 0.38-0.40 s beside a 3B prefill) (`shared_gpu`).
 * - exobar writes a generation task the moment the runner can take it and never waits
 *   for another runner's acknowledgement, so a gap between arrival and dispatch while
 *   the runner was ready and had room is a node bug (`node_dispatch_delay`): it is the
 *   signature of exo's blocking plan loop, the thing this product exists to avoid.
 */
import { pacingDecisions } from '../pacing/pacing-diagnosis';
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { diagnoseDecode } from './decode-diagnosis';
import { measureTtftParts } from '../node/request-metrics';
import { median } from '../../../shared/stats';
import { diagnosisContext, processed, type Cause, type DiagnosisContext, type ExaminedRequest, type FallbackCause } from './diagnosis-context';
import {
  DEFAULT_DIAGNOSIS_OPTIONS,
  type Diagnosis,
  type DiagnosisOptions,
  type Finding,
  type StallCause,
  type TtftPart,
  type TtftParts,
  type Verdict,
} from './diagnosis-types';
import { r1 } from './diagnosis-format';
import { soloFor } from './solo-reference';
import { endedPartWay } from './causes/ended-part-way';
import { loadStalled } from './causes/load-stalled';
import { modelLoad } from './causes/model-load';
import { nodeDispatchDelay } from './causes/node-dispatch-delay';
import { ownPrefill } from './causes/own-prefill';
import { queuedBehindSameModelPrefill } from './causes/queued-behind-same-model-prefill';
import { unexplainedRunnerWait, waitedInRunnerBehindPrompts } from './causes/waited-in-runner';
import { runnerCrashed } from './causes/runner-crashed';
import { runnerStuck } from './causes/runner-stuck';
import { sharedGpu } from './causes/shared-gpu';
import { unexplainedAckWait } from './causes/unexplained-ack-wait';
import { waitingForRunner } from './causes/waiting-for-runner';

export {
  DEFAULT_DIAGNOSIS_OPTIONS,
  type Diagnosis,
  type DiagnosisOptions,
  type Finding,
  type RunnerIncident,
  type SoloReference,
  type StallCause,
  type TtftPart,
  type TtftParts,
  type Verdict,
} from './diagnosis-types';

/** The causes tried for a request a runner's death ended, before any other: the death, not the wait, is what happened to it. */
const DEATH_CAUSES: readonly Cause[] = [runnerStuck, runnerCrashed];

/**
 * Per dominant part, the causes tried in this order; the first whose facts fit gives the
 * verdict, and the last always does. The order is the diagnosis's: a legitimate wait is
 * ruled out before a bug is named, a known mechanism before "unexplained".
 */
const CAUSES_BY_PART: Record<TtftPart, { tried: readonly Cause[]; otherwise: FallbackCause }> = {
  load: { tried: [loadStalled], otherwise: modelLoad },
  dispatch: { tried: [waitingForRunner], otherwise: nodeDispatchDelay },
  ack_wait: { tried: [queuedBehindSameModelPrefill], otherwise: unexplainedAckWait },
  runner_wait: { tried: [waitedInRunnerBehindPrompts], otherwise: unexplainedRunnerWait },
  prefill: { tried: [sharedGpu], otherwise: ownPrefill },
  first_token: { tried: [sharedGpu], otherwise: ownPrefill },
};

/** The parts of a request's wait so far, measured up to `until` (first token, end, or now), to 0.1 ms. */
export function ttftParts(t: RequestTimeline, until: number): TtftParts {
  const parts = measureTtftParts(t, until);
  const round = (n: number | null) => (n === null ? null : r1(n));
  return {
    loadMs: round(parts.loadMs),
    dispatchMs: round(parts.dispatchMs),
    ackWaitMs: round(parts.ackWaitMs),
    runnerWaitMs: round(parts.runnerWaitMs),
    prefillMs: round(parts.prefillMs),
    firstTokenMs: round(parts.firstTokenMs),
  };
}

/** The largest part; on a tie the earlier one, in the order the request lives them. */
function dominant(parts: TtftParts): TtftPart {
  const entries: Array<[TtftPart, number]> = [
    ['load', parts.loadMs ?? 0],
    ['dispatch', parts.dispatchMs ?? 0],
    ['ack_wait', parts.ackWaitMs ?? 0],
    ['runner_wait', parts.runnerWaitMs ?? 0],
    ['prefill', parts.prefillMs ?? 0],
    ['first_token', parts.firstTokenMs ?? 0],
  ];
  return entries.reduce((best, e) => (e[1] > best[1] ? e : best))[0];
}

/** The first verdict of `causes` for `r`, or null when none fits. */
function firstVerdict(ctx: DiagnosisContext, r: ExaminedRequest, causes: readonly Cause[]): Verdict | null {
  for (const cause of causes) {
    const verdict = cause(ctx, r);
    if (verdict) return verdict;
  }
  return null;
}

/** The verdict on the part that dominated `r`'s wait. */
function explainPart(ctx: DiagnosisContext, r: ExaminedRequest, part: TtftPart): Verdict {
  const chain = CAUSES_BY_PART[part];
  return firstVerdict(ctx, r, chain.tried) ?? chain.otherwise(ctx, r);
}

/** A finding for `t` when it was slow or a runner's death ended it; null otherwise. */
function examine(ctx: DiagnosisContext, t: RequestTimeline): Finding | null {
  const { opts } = ctx;
  const until = t.firstTokenAt ?? t.endedAt ?? opts.now;
  const elapsed = until - t.arrivedAt;
  const reference = soloFor(ctx.solo, t);
  const r: ExaminedRequest = { t, until, parts: ttftParts(t, until), reference };
  const death = firstVerdict(ctx, r, DEATH_CAUSES);
  const slow = elapsed >= opts.thresholdMs || (reference.ttftMs !== null && reference.ttftMs > 0 && elapsed >= opts.soloMultiple * reference.ttftMs);
  // A request a runner failure ended is always reported; others only when slow. A
  // request that ended early (cancelled) before its first token without being slow is not a stall.
  if (!slow && !death) return null;

  const part = dominant(r.parts);
  const base = {
    requestId: t.requestId,
    instanceId: t.instanceId,
    model: t.model,
    outcome: t.outcome,
    promptTokens: t.promptTokens,
    ttftMs: t.firstTokenAt !== null ? r1(t.firstTokenAt - t.arrivedAt) : null,
    elapsedMs: r1(elapsed),
    parts: r.parts,
    dominantPart: part,
  };
  const verdict = death ?? explainPart(ctx, r, part);
  const note = endedPartWay(ctx, t);
  return { ...base, processedPromptTokens: processed(ctx, t).tokens, ...verdict, explanation: note ? `${note} ${verdict.explanation}` : verdict.explanation };
}

/**
 * Diagnoses the slow TTFTs in `timelines`. `events` supply the runner statuses, the
 * failure codes, watchdog decisions and exits; both come from the node
 * (`requestTimelines()`, `recentEvents()`), with monotonic timestamps of one clock.
 */
export function diagnose(timelines: readonly RequestTimeline[], events: readonly NodeEvent[], options: Partial<DiagnosisOptions> = {}): Diagnosis {
  const opts: DiagnosisOptions = { ...DEFAULT_DIAGNOSIS_OPTIONS, now: performance.now(), ...options };
  const ctx = diagnosisContext(timelines, events, opts);
  const findings: Finding[] = [];
  for (const t of timelines) {
    const finding = examine(ctx, t);
    if (finding) findings.push(finding);
  }

  const decodeFindings = diagnoseDecode(timelines, opts.sharedGpuSlowdown);
  const summary: Partial<Record<StallCause, number>> = {};
  for (const f of [...findings, ...decodeFindings]) summary[f.cause] = (summary[f.cause] ?? 0) + 1;
  const models = [...new Set(timelines.map((t) => t.model))];
  return {
    options: { thresholdMs: opts.thresholdMs, soloMultiple: opts.soloMultiple, sharedGpuSlowdown: opts.sharedGpuSlowdown },
    examinedRequests: timelines.length,
    findings,
    decodeFindings,
    summary,
    runnerIncidents: ctx.incidents,
    soloReference: models.map((model) => {
      const own = [...ctx.solo.solo].filter((s) => s.model === model).map((s) => s.firstTokenAt! - s.arrivedAt);
      return { model, samples: own.length, medianTtftMs: own.length ? r1(median(own)!) : null };
    }),
    fastSynchOn: ctx.fastSynchOn,
    pacing: pacingDecisions(events),
  };
}
