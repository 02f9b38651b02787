/**
 * The bundle's diagnosis: for every slow time to first token (and every request a
 * runner failure ended), which part of the wait dominated and why, with the numbers
 * behind the verdict. A pure function of the node's request timelines and events.
 *
 * The causes follow docs/domain.md's two mechanisms and its diagnostic rule:
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
import { pacingDecisions, type PacingDecision } from '../pacing/pacing-diagnosis';
import type { RunnerStatusKind } from '../../../shared/runner-protocol';
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { isEventOf } from '../node/node-event';
import { diagnoseDecode, type DecodeFinding } from './decode-diagnosis';
import { busyIntervalOf, measureTtftParts, overlapMs, type TtftParts } from '../node/request-metrics';
import { isServingStatus } from '../../../shared/instance-state';
import { median } from '../../../shared/stats';

export type StallCause =
  | 'queued_behind_same_model_prefill'
  | 'own_prefill'
  | 'shared_gpu'
  | 'node_dispatch_delay'
  /** Arrival to dispatch while the runner was starting, restarting or full: legitimate waiting. */
  | 'waiting_for_runner'
  /** The request came while its model was loading (a load on request, or one it joined): it waited for the load. */
  | 'model_load'
  /** The watchdog found the runner silent and killed it; the request failed with runner_stuck. */
  | 'runner_stuck'
  | 'runner_crashed'
  /** Its decode ran markedly slower beside a neighbour's prefill or decode than the model's solo decode (decodeFindings). */
  | 'decode_slowed_by_neighbour'
  | 'unexplained';

/** The parts of a time to first token (they add up to the total); `load` only for a request that waited for its model to load. */
export type TtftPart = 'load' | 'dispatch' | 'ack_wait' | 'prefill' | 'first_token';

export interface DiagnosisOptions {
  /** A TTFT at or above this is examined. Default 1000 ms. */
  thresholdMs: number;
  /** ... and so is one at or above this multiple of the model's solo median for a comparable prompt. Default 3. */
  soloMultiple: number;
  /** Slower than solo by at least this factor while another runner was busy counts as GPU sharing. Default 1.3. */
  sharedGpuSlowdown: number;
  /** Monotonic "now" (performance.now() of the node process) for requests still in flight. */
  now: number;
}

export const DEFAULT_DIAGNOSIS_OPTIONS: Omit<DiagnosisOptions, 'now'> = {
  thresholdMs: 1000,
  soloMultiple: 3,
  sharedGpuSlowdown: 1.3,
};

export type { TtftParts } from '../node/request-metrics';

export interface Finding {
  requestId: string;
  instanceId: string;
  model: string;
  outcome: RequestTimeline['outcome'];
  promptTokens: number;
  /** Arrival to first token; null when no token came (failed, cancelled, or still waiting). */
  ttftMs: number | null;
  /** Arrival until the first token, the end, or the export for a request still waiting. */
  elapsedMs: number;
  parts: TtftParts;
  dominantPart: TtftPart;
  cause: StallCause;
  /** True when the verdict points at a defect in exobar: report it. */
  bugToReport: boolean;
  /**
   * Prompt tokens the runner actually processed: all of them once the first token came;
   * for a request that ended before it (cancelled part-way, failed) the count the last
   * prefill progress reported. Rates are computed from this, never from the prompt size.
   */
  processedPromptTokens: number;
  /** The verdict in words, with its numbers. */
  explanation: string;
  evidence: Record<string, unknown>;
}

/** The part of a finding that states the cause. */
export type Verdict = Pick<Finding, 'cause' | 'bugToReport' | 'explanation' | 'evidence'>;

export interface RunnerIncident {
  instanceId: string;
  /** Monotonic ms of the event. */
  t: number;
  kind: 'watchdog' | 'exit';
  cause: string | null;
  code: number | null;
  signal: string | null;
  reason: string | null;
  phase: string | null;
  silentMs: number | null;
  /** The watchdog's adaptive deadline when it fired. */
  deadlineMs: number | null;
}

export interface SoloReference {
  model: string;
  samples: number;
  /** Median arrival-to-first-token of requests that ran with no other runner busy. */
  medianTtftMs: number | null;
}

export interface Diagnosis {
  options: Omit<DiagnosisOptions, 'now'>;
  examinedRequests: number;
  findings: Finding[];
  /** Requests whose decode a neighbour on the GPU slowed (electron/core/diagnostics/decode-diagnosis.ts). */
  decodeFindings: DecodeFinding[];
  /** Findings per cause (decode findings included). */
  summary: Partial<Record<StallCause, number>>;
  runnerIncidents: RunnerIncident[];
  soloReference: SoloReference[];
  /** Instances whose runner reported fast synch on (latest hello): relevant to any shared_gpu verdict. */
  fastSynchOn: string[];
  /** The sharing policy's decisions: each paced prefill, beside whose stream, at what cost (docs/sharing-policy.md). */
  pacing: PacingDecision[];
}

/** Prompts up to this size cost mostly fixed overhead: all count as comparable to each other. */
const SHORT_PROMPT_TOKENS = 256;
/** Another runner must have been busy for at least this share of a request's compute to blame the shared GPU. */
const MIN_SHARED_FRACTION = 0.25;
/** Dispatch gaps shorter than this are scheduling noise, not waiting. */
const DISPATCH_NOISE_MS = 5;

const r1 = (n: number): number => Math.round(n * 10) / 10;
const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`);

/** Milliseconds of [b0, b1] that [a0, a1] covers. */
const overlap = (a0: number, a1: number, b0: number, b1: number): number => overlapMs([{ start: a0, end: a1 }], b0, b1);

/**
 * Prompts of one size class cost about the same: up to 256 tokens (mostly fixed
 * overhead) are one class, larger ones fall in classes that double in size.
 */
function sizeClass(promptTokens: number): number {
  return promptTokens <= SHORT_PROMPT_TOKENS ? 0 : Math.ceil(Math.log2(promptTokens / SHORT_PROMPT_TOKENS));
}

/** The median of sorted `values` with one occurrence of `without` left out (when present). */
function medianWithout(sorted: readonly number[], without: number | null): { median: number | null; count: number } {
  let skip = -1;
  if (without !== null) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < without) lo = mid + 1;
      else hi = mid;
    }
    if (lo < sorted.length && sorted[lo] === without) skip = lo;
  }
  const count = sorted.length - (skip === -1 ? 0 : 1);
  if (count === 0) return { median: null, count };
  const at = (i: number) => sorted[skip !== -1 && i >= skip ? i + 1 : i]!;
  const mid = Math.floor(count / 2);
  return { median: count % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2, count };
}

/** When a timeline's request stopped occupying its runner's step with prefill. */
function prefillEnd(t: RequestTimeline, now: number): number {
  return t.firstTokenAt ?? t.prefillEndAt ?? t.endedAt ?? now;
}

/** The parts of a request's wait so far, measured up to `until` (first token, end, or now), to 0.1 ms. */
export function ttftParts(t: RequestTimeline, until: number): TtftParts {
  const parts = measureTtftParts(t, until);
  const round = (n: number | null) => (n === null ? null : r1(n));
  return {
    loadMs: round(parts.loadMs),
    dispatchMs: round(parts.dispatchMs),
    ackWaitMs: round(parts.ackWaitMs),
    prefillMs: round(parts.prefillMs),
    firstTokenMs: round(parts.firstTokenMs),
  };
}

function dominant(parts: TtftParts): TtftPart {
  const entries: Array<[TtftPart, number]> = [
    ['load', parts.loadMs ?? 0],
    ['dispatch', parts.dispatchMs ?? 0],
    ['ack_wait', parts.ackWaitMs ?? 0],
    ['prefill', parts.prefillMs ?? 0],
    ['first_token', parts.firstTokenMs ?? 0],
  ];
  return entries.reduce((best, e) => (e[1] > best[1] ? e : best))[0];
}

interface StatusChange {
  t: number;
  kind: RunnerStatusKind;
}

/** Per instance: the runner's status changes, in time order. */
function statusHistory(events: readonly NodeEvent[]): Map<string, StatusChange[]> {
  const out = new Map<string, StatusChange[]>();
  for (const e of events.filter(isEventOf('runner_status'))) {
    const list = out.get(e.instanceId) ?? [];
    list.push({ t: e.t, kind: e.data.status.kind });
    out.set(e.instanceId, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.t - b.t);
  return out;
}

/** The runner statuses that held at some moment in [from, to]; empty when nothing is known. */
function statusesDuring(history: StatusChange[] | undefined, from: number, to: number): RunnerStatusKind[] {
  if (!history || history.length === 0) return [];
  const seen = new Set<RunnerStatusKind>();
  let before: StatusChange | null = null;
  for (const change of history) {
    if (change.t <= from) before = change;
    else if (change.t <= to) seen.add(change.kind);
  }
  if (before) seen.add(before.kind);
  return [...seen];
}

function incidentsOf(events: readonly NodeEvent[]): RunnerIncident[] {
  const out: RunnerIncident[] = [];
  for (const e of events) {
    if (e.kind === 'watchdog_fired') {
      const { phase, silentMs, deadlineMs } = e.data;
      out.push({ instanceId: e.instanceId, t: e.t, kind: 'watchdog', cause: 'stuck', code: null, signal: null, reason: null, phase, silentMs, deadlineMs });
    } else if (e.kind === 'runner_exited' && e.data.cause !== 'stopped') {
      const { cause, code, signal, reason } = e.data;
      out.push({ instanceId: e.instanceId, t: e.t, kind: 'exit', cause, code, signal, reason, phase: null, silentMs: null, deadlineMs: null });
    }
  }
  return out;
}

/** The error code a failed request ended with (request_failed events carry it). */
function failureCodes(events: readonly NodeEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) if (e.kind === 'request_failed') out.set(e.requestId, e.data.code);
  return out;
}

/** Per request, its last prefill progress: tokens processed so far and when (monotonic ms). */
function prefillProgress(events: readonly NodeEvent[]): Map<string, { processed: number; t: number }> {
  const out = new Map<string, { processed: number; t: number }>();
  for (const e of events) if (e.kind === 'prefill_progress') out.set(e.requestId, { processed: e.data.processed, t: e.t });
  return out;
}

function latestFastSynch(events: readonly NodeEvent[]): string[] {
  const latest = new Map<string, boolean>();
  for (const e of events) if (e.kind === 'runner_hello') latest.set(e.instanceId, e.data.fastSynch);
  return [...latest].filter(([, on]) => on).map(([id]) => id);
}

/** Requests that ran with no other runner busy: the reference for "slower than solo". */
function soloSamples(timelines: readonly RequestTimeline[]): RequestTimeline[] {
  return timelines.filter((t) => t.firstTokenAt !== null && t.acknowledgedAt !== null && t.concurrentBusyInstances.length === 0);
}

/**
 * Diagnoses the slow TTFTs in `timelines`. `events` supply the runner statuses, the
 * failure codes, watchdog decisions and exits; both come from the node
 * (`requestTimelines()`, `recentEvents()`), with monotonic timestamps of one clock.
 */
export function diagnose(timelines: readonly RequestTimeline[], events: readonly NodeEvent[], options: Partial<DiagnosisOptions> = {}): Diagnosis {
  const opts: DiagnosisOptions = { ...DEFAULT_DIAGNOSIS_OPTIONS, now: performance.now(), ...options };
  const solo = new Set(soloSamples(timelines));
  // Solo references per model and prompt size class, sorted once (the history holds thousands of requests).
  const soloGroups = new Map<string, { ttft: number[]; service: number[] }>();
  for (const s of solo) {
    const key = `${s.model}\u0000${sizeClass(s.promptTokens)}`;
    const group = soloGroups.get(key) ?? { ttft: [], service: [] };
    group.ttft.push(s.firstTokenAt! - s.arrivedAt);
    group.service.push(s.firstTokenAt! - s.acknowledgedAt!);
    soloGroups.set(key, group);
  }
  for (const group of soloGroups.values()) {
    group.ttft.sort((a, b) => a - b);
    group.service.sort((a, b) => a - b);
  }
  const history = statusHistory(events);
  const incidents = incidentsOf(events);
  const stateChanges = events.filter(isEventOf('runner_state'));
  const codes = failureCodes(events);
  const progress = prefillProgress(events);
  const fastSynchOn = latestFastSynch(events);
  const byInstance = new Map<string, RequestTimeline[]>();
  for (const t of timelines) {
    const list = byInstance.get(t.instanceId);
    if (list) list.push(t);
    else byInstance.set(t.instanceId, [t]);
  }

  const findings: Finding[] = [];
  for (const t of timelines) {
    const finding = examine(t);
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
    runnerIncidents: incidents,
    soloReference: models.map((model) => {
      const own = [...solo].filter((s) => s.model === model).map((s) => s.firstTokenAt! - s.arrivedAt);
      return { model, samples: own.length, medianTtftMs: own.length ? r1(median(own)!) : null };
    }),
    fastSynchOn,
    pacing: pacingDecisions(events),
  };

  function soloFor(t: RequestTimeline): { ttftMs: number | null; serviceMs: number | null; samples: number } {
    const group = soloGroups.get(`${t.model}\u0000${sizeClass(t.promptTokens)}`);
    if (!group) return { ttftMs: null, serviceMs: null, samples: 0 };
    // A solo request is not its own reference.
    const self = solo.has(t);
    const ttft = medianWithout(group.ttft, self ? t.firstTokenAt! - t.arrivedAt : null);
    const service = medianWithout(group.service, self ? t.firstTokenAt! - t.acknowledgedAt! : null);
    return { ttftMs: ttft.median, serviceMs: service.median, samples: ttft.count };
  }

  function examine(t: RequestTimeline): Finding | null {
    const until = t.firstTokenAt ?? t.endedAt ?? opts.now;
    const elapsed = until - t.arrivedAt;
    const failureCode = t.outcome === 'failed' ? (codes.get(t.requestId) ?? null) : null;
    const runnerDied = failureCode === 'runner_stuck' || failureCode === 'runner_crashed';
    const reference = soloFor(t);
    const slow = elapsed >= opts.thresholdMs || (reference.ttftMs !== null && reference.ttftMs > 0 && elapsed >= opts.soloMultiple * reference.ttftMs);
    // A request a runner failure ended is always reported; others only when slow. A
    // request that ended early (cancelled) before its first token without being slow is not a stall.
    if (!slow && !runnerDied) return null;

    const parts = ttftParts(t, until);
    const part = dominant(parts);
    const base = {
      requestId: t.requestId,
      instanceId: t.instanceId,
      model: t.model,
      outcome: t.outcome,
      promptTokens: t.promptTokens,
      ttftMs: t.firstTokenAt !== null ? r1(t.firstTokenAt - t.arrivedAt) : null,
      elapsedMs: r1(elapsed),
      parts,
      dominantPart: part,
    };
    const verdict = runnerDied ? runnerDeath(t, failureCode!, until) : explain(t, part, parts, reference, until);
    const note = endedPartWay(t);
    return { ...base, processedPromptTokens: processed(t).tokens, ...verdict, explanation: note ? `${note} ${verdict.explanation}` : verdict.explanation };
  }

  /**
   * The prompt tokens the runner processed and when the last of them was reported: the
   * whole prompt by the first token; else what the last prefill progress said (zero
   * before any), which is all a request cancelled or failed part-way ever cost.
   */
  function processed(t: RequestTimeline): { tokens: number; at: number | null } {
    if (t.firstTokenAt !== null) return { tokens: t.promptTokens, at: t.firstTokenAt };
    const last = progress.get(t.requestId);
    return last ? { tokens: Math.min(last.processed, t.promptTokens), at: last.t } : { tokens: 0, at: null };
  }

  /** "Cancelled part-way through its prefill, at 12288 of 30007 prompt tokens." for a request that ended before its first token. */
  function endedPartWay(t: RequestTimeline): string | null {
    if (t.firstTokenAt !== null || (t.outcome !== 'cancelled' && t.outcome !== 'failed')) return null;
    const done = processed(t).tokens;
    const verb = t.outcome === 'cancelled' ? 'Cancelled' : 'Failed';
    if (done === 0) return `${verb} before its prefill made progress (0 of ${t.promptTokens} prompt tokens processed).`;
    return `${verb} part-way through its prefill, at ${done} of ${t.promptTokens} prompt tokens.`;
  }

  function stateAfter(instanceId: string, from: number): { state: string; reason: string } | null {
    const next = stateChanges.find((e) => e.instanceId === instanceId && e.t >= from - 1 && ['restarting', 'failed', 'needs_attention'].includes(e.data.to));
    return next ? { state: next.data.to, reason: next.data.reason } : null;
  }

  function runnerDeath(t: RequestTimeline, code: string, until: number): Verdict {
    const mine = incidents.filter((i) => i.instanceId === t.instanceId && i.t >= t.arrivedAt - 1 && i.t <= until + 1000);
    const watchdog = mine.find((i) => i.kind === 'watchdog') ?? null;
    const exit = mine.find((i) => i.kind === 'exit') ?? null;
    const evidence = {
      failureCode: code,
      watchdogPhase: watchdog?.phase ?? null,
      silentMs: watchdog?.silentMs ?? null,
      deadlineMs: watchdog?.deadlineMs ?? null,
      exitCause: exit?.cause ?? null,
      exitCode: exit?.code ?? null,
      exitSignal: exit?.signal ?? null,
      reason: exit?.reason ?? null,
      // What the supervisor did next, from its state machine: restarting, failed, needs_attention.
      runnerStateAfter: stateAfter(t.instanceId, watchdog?.t ?? exit?.t ?? until),
    };
    if (code === 'runner_stuck') {
      const deadline = watchdog?.deadlineMs != null ? ` (its deadline: ${ms(watchdog.deadlineMs)})` : '';
      const silence = watchdog?.silentMs != null ? ` after ${ms(watchdog.silentMs)} without output${deadline}` : '';
      return {
        cause: 'runner_stuck',
        bugToReport: false,
        explanation:
          `The runner of ${t.instanceId} went silent during ${watchdog?.phase ?? 'its work'}${silence}; the watchdog killed it and failed this request ` +
          '(a runner wedged on the GPU stays alive, so only missing progress shows it).' +
          (evidence.runnerStateAfter?.state === 'needs_attention' ? ` It was not relaunched: ${evidence.runnerStateAfter.reason}.` : ''),
        evidence,
      };
    }
    const how = exit?.signal ? `signal ${exit.signal}` : exit?.code != null ? `exit code ${exit.code}` : 'an unknown exit';
    return {
      cause: 'runner_crashed',
      bugToReport: false,
      explanation: `The runner of ${t.instanceId} died (${how}) while this request was in flight; see runners/${t.instanceId}/stderr.log.`,
      evidence,
    };
  }

  function explain(t: RequestTimeline, part: TtftPart, parts: TtftParts, reference: ReturnType<typeof soloFor>, until: number): Verdict {
    if (part === 'load') {
      const loadMs = parts.loadMs ?? 0;
      return {
        cause: 'model_load',
        bugToReport: false,
        explanation: `Waited ${ms(loadMs)} for ${t.model} to load: the request came while its model was loading (a load on request, or one it joined).`,
        evidence: { loadMs },
      };
    }
    if (part === 'dispatch') return explainDispatch(t, parts.dispatchMs ?? 0);
    if (part === 'ack_wait') return explainAckWait(t, parts.ackWaitMs ?? 0, until);
    return explainCompute(t, reference, until);
  }

  function explainDispatch(t: RequestTimeline, dispatchMs: number): Verdict {
    const end = t.dispatchedAt ?? opts.now;
    const statuses = statusesDuring(history.get(t.instanceId), t.arrivedAt, end);
    const notReady = statuses.filter((s) => !isServingStatus(s));
    const siblings = (byInstance.get(t.instanceId) ?? []).filter((o) => o !== t);
    const inFlightAtArrival = siblings.filter((o) => o.dispatchedAt !== null && o.dispatchedAt <= t.arrivedAt && (o.endedAt ?? Infinity) > t.arrivedAt).length;
    // A slot freed just before the dispatch: the node held it back at its in-flight cap.
    const freedSlot =
      t.dispatchedAt !== null && siblings.some((o) => o.endedAt !== null && o.endedAt <= t.dispatchedAt! && t.dispatchedAt! - o.endedAt <= DISPATCH_NOISE_MS);
    if (notReady.length > 0 || freedSlot) {
      return {
        cause: 'waiting_for_runner',
        bugToReport: false,
        explanation:
          notReady.length > 0
            ? `Waited ${ms(dispatchMs)} in the node's queue while the runner of ${t.instanceId} was not ready (${notReady.join(', ')}).`
            : `Waited ${ms(dispatchMs)} in the node's queue: ${inFlightAtArrival} requests already filled the runner's in-flight slots, and it was sent when one ended.`,
        evidence: { dispatchMs, runnerStatuses: statuses, inFlightAtArrival },
      };
    }
    // The plan-loop signature (docs/domain.md's diagnostic rule): another runner mid-prefill
    // with a task awaiting its ack, and this dispatch released right when that ack came.
    const blockers = timelines
      .filter((o) => o.instanceId !== t.instanceId && o.dispatchedAt !== null && o.dispatchedAt <= end)
      .filter((o) => overlap(o.dispatchedAt!, o.acknowledgedAt ?? opts.now, t.arrivedAt, end) > 0)
      .map((o) => ({
        instanceId: o.instanceId,
        requestId: o.requestId,
        awaitingAckMs: r1(overlap(o.dispatchedAt!, o.acknowledgedAt ?? opts.now, t.arrivedAt, end)),
        acknowledgedBeforeDispatchMs: o.acknowledgedAt !== null && t.dispatchedAt !== null ? r1(t.dispatchedAt - o.acknowledgedAt) : null,
      }))
      .sort((a, b) => b.awaitingAckMs - a.awaitingAckMs)
      .slice(0, 5);
    const signature = blockers[0]
      ? ` Meanwhile request ${blockers[0].requestId} on ${blockers[0].instanceId} waited ${ms(blockers[0].awaitingAckMs)} for its acknowledgement: ` +
        'the pattern of a dispatch loop that awaits another runner\u2019s ack (exo\u2019s blocking supervisor).'
      : '';
    return {
      cause: 'node_dispatch_delay',
      bugToReport: true,
      explanation:
        `The node took ${ms(dispatchMs)} to write this task to a ready runner with free slots (${inFlightAtArrival} in flight). ` +
        `exobar dispatches at once, so this is a bug: please report it with this bundle.${signature}`,
      evidence: { dispatchMs, runnerStatuses: statuses, inFlightAtArrival, otherRunnersAwaitingAck: blockers },
    };
  }

  function explainAckWait(t: RequestTimeline, ackWaitMs: number, until: number): Verdict {
    const from = t.dispatchedAt ?? t.arrivedAt;
    const to = t.acknowledgedAt ?? until;
    const candidates = (byInstance.get(t.instanceId) ?? [])
      .filter((o) => o !== t && o.acknowledgedAt !== null && o.acknowledgedAt <= to)
      .map((o) => ({ o, start: o.acknowledgedAt!, end: prefillEnd(o, opts.now) }))
      .map((c) => ({ ...c, overlapMs: overlap(c.start, c.end, from, to) }))
      .filter((c) => c.overlapMs > 0)
      .sort((a, b) => b.overlapMs - a.overlapMs);
    const blocking = candidates[0];
    if (blocking && blocking.overlapMs >= ackWaitMs / 2) {
      const o = blocking.o;
      const prefillMs = blocking.end - blocking.start;
      return {
        cause: 'queued_behind_same_model_prefill',
        bugToReport: false,
        explanation:
          `Written to the runner at once, but acknowledged only after ${ms(ackWaitMs)}: for ${ms(blocking.overlapMs)} of that the same runner ` +
          `was in the step prefilling request ${o.requestId} (${o.promptTokens} prompt tokens, ${ms(prefillMs)} of prefill), and a runner admits ` +
          'new tasks only between steps. Other models were not held up by it.',
        evidence: {
          ackWaitMs,
          blockingRequestId: o.requestId,
          blockingPromptTokens: o.promptTokens,
          blockingPrefillMs: r1(prefillMs),
          overlapMs: r1(blocking.overlapMs),
          ackedWithinMsOfBlockingPrefillEnd: t.acknowledgedAt !== null ? r1(t.acknowledgedAt - blocking.end) : null,
        },
      };
    }
    return {
      cause: 'unexplained',
      bugToReport: false,
      explanation:
        `Waited ${ms(ackWaitMs)} for the runner's acknowledgement with no long prefill of the same runner to explain it` +
        (t.outcome === 'in_flight' ? ' (still waiting at export: a stuck runner is likely; see its logs and the watchdog limits).' : '.'),
      evidence: { ackWaitMs, sameRunnerPrefillOverlapMs: r1(blocking?.overlapMs ?? 0) },
    };
  }

  /** Milliseconds of [from, to] during which another instance's runner had acknowledged work (from its timelines). */
  function busyOverlap(instanceId: string, from: number, to: number): number | null {
    const theirs = byInstance.get(instanceId);
    if (!theirs) return null;
    return overlapMs(
      theirs.flatMap((o) => busyIntervalOf(o) ?? []),
      from,
      to,
      opts.now,
    );
  }

  function explainCompute(t: RequestTimeline, reference: ReturnType<typeof soloFor>, until: number): Verdict {
    const start = t.acknowledgedAt ?? t.arrivedAt;
    const serviceMs = until - start;
    const busy = t.concurrentBusyInstances.map((id) => {
      const o = busyOverlap(id, start, until);
      return { instanceId: id, fastSynch: fastSynchOn.includes(id), overlapMs: o === null ? null : r1(o) };
    });
    // The share of this request's own compute time another runner was busy (null: unknown, its timelines are gone).
    const known = busy.filter((b) => b.overlapMs !== null);
    const sharedFraction = known.length === busy.length && busy.length > 0 && serviceMs > 0 ? Math.max(...known.map((b) => b.overlapMs!)) / serviceMs : null;
    const slowdown = reference.serviceMs !== null && reference.serviceMs > 0 ? serviceMs / reference.serviceMs : null;
    // The rate counts only the tokens processed, over the time they took: a request
    // cancelled part-way did not prefill its whole prompt in the time it ran.
    const done = processed(t);
    const rateMs = done.at !== null ? done.at - start : 0;
    const rate = done.tokens > 0 && rateMs > 0 ? Math.round((done.tokens / rateMs) * 1000) : null;
    const evidence = {
      serviceMs: r1(serviceMs),
      soloServiceMs: reference.serviceMs !== null ? r1(reference.serviceMs) : null,
      soloSamples: reference.samples,
      slowdown: slowdown !== null ? Math.round(slowdown * 100) / 100 : null,
      promptTokensPerSecond: rate,
      busyInstances: busy,
      sharedFraction: sharedFraction !== null ? Math.round(sharedFraction * 100) / 100 : null,
    };
    const sharedFastSynch = busy.some((b) => b.fastSynch) || fastSynchOn.includes(t.instanceId);
    const hazard = sharedFastSynch
      ? ' Fast synch is on for a runner involved: with two MLX processes on one GPU that can collapse throughput, far beyond plain sharing.'
      : '';
    // Sharing explains a slowdown only for the time it lasted: a long prompt that overlapped
    // another runner for a moment is still its own prefill.
    const sharedLongEnough = sharedFraction === null || sharedFraction >= MIN_SHARED_FRACTION;
    if (busy.length > 0 && sharedLongEnough && (slowdown === null || slowdown >= opts.sharedGpuSlowdown)) {
      const against =
        slowdown !== null
          ? `${slowdown.toFixed(2)}x its solo time for a comparable prompt (${ms(reference.serviceMs!)} over ${reference.samples} solo samples)`
          : 'no solo sample of a comparable prompt to compare with (unconfirmed)';
      return {
        cause: 'shared_gpu',
        bugToReport: false,
        explanation:
          `Its own prefill and first token took ${ms(serviceMs)}, ${against}, while ${busy.map((b) => b.instanceId).join(', ')} ` +
          `kept the shared GPU busy.${hazard}`,
        evidence: { ...evidence, confirmed: slowdown !== null },
      };
    }
    const solo = slowdown !== null ? ` (${slowdown.toFixed(2)}x the solo time of comparable prompts)` : '';
    const rateWords = rate !== null ? ` (${rate} tokens/s)` : '';
    const what =
      done.tokens === t.promptTokens
        ? `Its own prefill of ${t.promptTokens} prompt tokens took ${ms(serviceMs)}${rateWords}`
        : `Its own prefill ran ${ms(serviceMs)} and processed ${done.tokens} of its ${t.promptTokens} prompt tokens${rateWords}`;
    return {
      cause: 'own_prefill',
      bugToReport: false,
      explanation: `${what}${solo}: the prompt is long, nothing else held it up.`,
      evidence,
    };
  }
}
