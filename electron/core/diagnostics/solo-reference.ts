/**
 * The solo reference: how long a model's comparable prompts take when no other runner
 * is busy. "Slower than solo" verdicts (shared_gpu, the soloMultiple threshold) stand on it.
 */
import type { RequestTimeline } from '../node/node-types';

/** Prompts up to this size cost mostly fixed overhead: all count as comparable to each other. */
const SHORT_PROMPT_TOKENS = 256;

/** A request's solo comparison: medians of its model's size class, itself left out. */
export interface SoloComparison {
  ttftMs: number | null;
  serviceMs: number | null;
  samples: number;
}

/** The solo samples of one model and size class, sorted (arrival→first token, ack→first token). */
export interface SoloGroups {
  solo: ReadonlySet<RequestTimeline>;
  groups: Map<string, { ttft: number[]; service: number[] }>;
}

/**
 * Prompts of one size class cost about the same: up to 256 tokens (mostly fixed
 * overhead) are one class, larger ones fall in classes that double in size.
 */
export function sizeClass(promptTokens: number): number {
  return promptTokens <= SHORT_PROMPT_TOKENS ? 0 : Math.ceil(Math.log2(promptTokens / SHORT_PROMPT_TOKENS));
}

/** The median of sorted `values` with one occurrence of `without` left out (when present). */
export function medianWithout(sorted: readonly number[], without: number | null): { median: number | null; count: number } {
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

/** Requests that ran with no other runner busy: the reference for "slower than solo". */
export function soloSamples(timelines: readonly RequestTimeline[]): RequestTimeline[] {
  return timelines.filter((t) => t.firstTokenAt !== null && t.acknowledgedAt !== null && t.concurrentBusyInstances.length === 0);
}

const groupKey = (model: string, promptTokens: number): string => `${model}\u0000${sizeClass(promptTokens)}`;

/** Groups the solo samples per model and size class, sorted once (the history holds thousands of requests). */
export function soloGroups(timelines: readonly RequestTimeline[]): SoloGroups {
  const solo = new Set(soloSamples(timelines));
  const groups = new Map<string, { ttft: number[]; service: number[] }>();
  for (const s of solo) {
    const key = groupKey(s.model, s.promptTokens);
    const group = groups.get(key) ?? { ttft: [], service: [] };
    group.ttft.push(s.firstTokenAt! - s.arrivedAt);
    group.service.push(s.firstTokenAt! - s.acknowledgedAt!);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    group.ttft.sort((a, b) => a - b);
    group.service.sort((a, b) => a - b);
  }
  return { solo, groups };
}

/** The solo medians `t` is compared with; a solo request is not its own reference. */
export function soloFor(reference: SoloGroups, t: RequestTimeline): SoloComparison {
  const group = reference.groups.get(groupKey(t.model, t.promptTokens));
  if (!group) return { ttftMs: null, serviceMs: null, samples: 0 };
  const self = reference.solo.has(t);
  const ttft = medianWithout(group.ttft, self ? t.firstTokenAt! - t.arrivedAt : null);
  const service = medianWithout(group.service, self ? t.firstTokenAt! - t.acknowledgedAt! : null);
  return { ttftMs: ttft.median, serviceMs: service.median, samples: ttft.count };
}
