/**
 * What both compute causes (shared_gpu, own_prefill) read about a request's own prefill
 * and first token: how long it took, against its solo reference, and which other
 * runners kept the GPU busy meanwhile. Two runners share one GPU, and a model computes
 * slower while the other one works (exo measured 0.23 s alone vs 0.38-0.40 s beside a
 * 3B prefill).
 */
import { busyIntervalOf } from '../../node/request-metrics';
import { overlapMs } from '../../sharing/intervals';
import { processed, type DiagnosisContext, type ExaminedRequest } from '../diagnosis-context';
import { r1 } from '../diagnosis-format';

/** The request's compute, measured. */
export interface ComputeFacts {
  serviceMs: number;
  /** serviceMs over the solo median; null without a comparable solo sample. */
  slowdown: number | null;
  /** Prompt tokens per second over the tokens actually processed; null when unknown. */
  rate: number | null;
  done: { tokens: number; at: number | null };
  busy: Array<{ instanceId: string; fastSynch: boolean; overlapMs: number | null }>;
  /** The share of the compute another runner was busy; null when unknown (its timelines are gone). */
  sharedFraction: number | null;
  /** The evidence both verdicts report, in the bundle's key order. */
  evidence: Record<string, unknown>;
}

/** Milliseconds of [from, to] during which `instanceId`'s runner had acknowledged work (from its timelines); null when none are kept. */
function busyOverlap(ctx: DiagnosisContext, instanceId: string, from: number, to: number): number | null {
  const theirs = ctx.byInstance.get(instanceId);
  if (!theirs) return null;
  return overlapMs(
    theirs.flatMap((o) => busyIntervalOf(o) ?? []),
    from,
    to,
    ctx.opts.now,
  );
}

/** Measures the compute part of `r.t` (acknowledgement to first token, end, or now). */
export function computeFacts(ctx: DiagnosisContext, { t, reference, until }: ExaminedRequest): ComputeFacts {
  const start = t.acknowledgedAt ?? t.arrivedAt;
  const serviceMs = until - start;
  const busy = t.concurrentBusyInstances.map((id) => {
    const o = busyOverlap(ctx, id, start, until);
    return { instanceId: id, fastSynch: ctx.fastSynchOn.includes(id), overlapMs: o === null ? null : r1(o) };
  });
  const known = busy.filter((b) => b.overlapMs !== null);
  const sharedFraction = known.length === busy.length && busy.length > 0 && serviceMs > 0 ? Math.max(...known.map((b) => b.overlapMs!)) / serviceMs : null;
  const slowdown = reference.serviceMs !== null && reference.serviceMs > 0 ? serviceMs / reference.serviceMs : null;
  // The rate counts only the tokens processed, over the time they took: a request
  // cancelled part-way did not prefill its whole prompt in the time it ran.
  const done = processed(ctx, t);
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
  return { serviceMs, slowdown, rate, done, busy, sharedFraction, evidence };
}
