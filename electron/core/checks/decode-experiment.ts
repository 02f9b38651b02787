/**
 * Experiment 2, decode under prefill: B streams a long answer; once it has decoded
 * `decodeTokens` tokens alone, A prefills the long prompt; B goes on for as many tokens
 * after A's first token, then is cancelled. B's ITL p50/p95 and tokens/s before,
 * during and after A's prefill, and the gaps over time for the chart.
 *
 * With `policies` and `applyPolicy` (setting `sharing.policy`), it runs once per policy
 * in one check (`off`, then `decode_first`): `applyPolicy` sets the policy for that run
 * and returns the undo, called after it also on cancel or failure, so the operator's
 * policy is back once the experiment ends. On an attached exo, where exobar paces
 * nothing, it runs once per hold instead (`holds` and `applyHold`, setting `exo.hold`:
 * on, then off). The top-level figures are the first run's.
 */
import type { z } from 'zod';
import type { DecodeExperimentSchema, DecodeRun } from '../../../shared/sharing-check';
import { uniquePrompt } from './check-requests';
import { longPromptTokens, sleep, throwIfCancelled, unlessCancelled, type CheckContext } from './check-context';
import { gapsOf, ratioOf, splitSpans } from './decode-spans';

export interface DecodeExperimentOptions {
  promptTokens: number;
  decodeTokens: number;
  /** The sharing policies to run under, one run each (named in the result); none: one run as configured. */
  policies?: readonly string[];
  applyPolicy?: (policy: string) => Promise<() => Promise<void>>;
  /** On exo: the holds to run under (one run each), and how to set one for a run; replaces the policies. */
  holds?: readonly boolean[];
  applyHold?: (on: boolean) => Promise<() => Promise<void>>;
}

/** On exo, experiments 1 and 2 run with exobar's hold on, then off. */
export const CHECK_HOLDS = [true, false] as const;

/** One run's setting: a sharing policy (local) or the hold (exo), and how to put it in force. */
export interface RunVariant {
  policy: string | null;
  hold: boolean | null;
  apply: (() => Promise<() => Promise<void>>) | null;
  label: string;
}

/** The runs asked for: one per hold on exo, else one per policy, else one as configured. */
export function runVariants(options: Pick<DecodeExperimentOptions, 'policies' | 'applyPolicy' | 'holds' | 'applyHold'>): RunVariant[] {
  const { applyHold, applyPolicy } = options;
  if (applyHold && options.holds?.length)
    return options.holds.map((hold) => ({ policy: null, hold, apply: () => applyHold(hold), label: `, hold ${hold ? 'on' : 'off'}` }));
  if (applyPolicy && options.policies?.length)
    return options.policies.map((policy) => ({ policy, hold: null, apply: () => applyPolicy(policy), label: `, policy ${policy}` }));
  return [{ policy: null, hold: null, apply: null, label: '' }];
}

/** The policies the check compares, in this order: the first is the report's headline run. */
export const CHECK_POLICIES = ['off', 'decode_first'] as const;

/** B's answer is cut off by cancel; this only bounds it. */
const B_MAX_TOKENS = 100_000;

async function waitFor(ctx: CheckContext, ok: () => boolean, ended: () => boolean): Promise<void> {
  while (!ok() && !ended()) {
    throwIfCancelled(ctx.signal);
    await sleep(10);
  }
}

/** Runs experiment 2 once per policy asked for (once as configured without). */
export async function runDecodeExperiment(
  ctx: CheckContext,
  options: DecodeExperimentOptions,
  at: [number, number],
): Promise<z.infer<typeof DecodeExperimentSchema>> {
  const variants = runVariants(options);
  const runs: DecodeRun[] = [];
  for (const [i, variant] of variants.entries()) {
    const share = (at[1] - at[0]) / variants.length;
    runs.push(await runOnce(ctx, options, variant, [at[0] + share * i, at[0] + share * (i + 1)]));
  }
  const first = runs[0]!;
  const off = runs.find((r) => r.policy === 'off');
  const on = runs.find((r) => r.policy === 'decode_first');
  return { ran: true, ...first, runs, prefillCostRatio: off && on ? ratioOf(on.aPrefillS, off.aPrefillS) : null };
}

async function runOnce(ctx: CheckContext, options: DecodeExperimentOptions, variant: RunVariant, at: [number, number]): Promise<DecodeRun> {
  const undo = variant.apply ? await variant.apply() : null;
  try {
    const promptTokens = longPromptTokens(ctx.a, options.promptTokens);
    const n = options.decodeTokens;
    const label = variant.label;
    const say = (what: string, f: number) => ctx.progress(`Experiment 2 (decode under prefill${label}): ${what}`, at[0] + (at[1] - at[0]) * f);
    say(`${ctx.b.name} decodes alone`, 0);
    const bMax = Math.min(B_MAX_TOKENS, Math.max(3 * n + 64, (ctx.b.contextLength ?? B_MAX_TOKENS) - 64));
    const b = ctx.requests.submit(ctx.b.id, uniquePrompt(40), bMax);
    const bEnded = () => b.endedAt !== null;
    await waitFor(ctx, () => b.tokenTimes.length > n, bEnded);
    say(`${ctx.b.name} decodes while ${ctx.a.name} prefills ${promptTokens} tokens`, 0.3);
    const a = ctx.requests.submit(ctx.a.id, uniquePrompt(promptTokens), 1);
    await unlessCancelled(ctx.signal, a.firstToken);
    const prefillStart = a.acknowledgedAt ?? a.submittedAt;
    const prefillEnd = a.tokenTimes[0] ?? a.endedAt ?? performance.now();
    say(`${ctx.b.name} decodes after ${ctx.a.name}'s prefill`, 0.8);
    const afterStart = b.tokenTimes.length;
    await waitFor(ctx, () => b.tokenTimes.length >= afterStart + n, bEnded);
    ctx.requests.cancel(b);
    await unlessCancelled(ctx.signal, Promise.all([a.done, b.done]));
    const gaps = gapsOf(b.tokenTimes);
    const spans = splitSpans(gaps, prefillStart, prefillEnd);
    const origin = b.tokenTimes[0] ?? b.submittedAt;
    return {
      ...spans,
      decodeRatio: ratioOf(spans.during.decodeTokensPerSecond, spans.before.decodeTokensPerSecond),
      itlP95Ratio: ratioOf(spans.during.itlP95Ms, spans.before.itlP95Ms),
      idleRatio: ratioOf(spans.after.decodeTokensPerSecond, spans.before.decodeTokensPerSecond),
      itl: gaps.map((g) => ({ t: Math.round((g.at - origin) * 10) / 10, itlMs: Math.round(g.gapMs * 100) / 100 })),
      aPrefill: { start: Math.round(prefillStart - origin), end: Math.round(prefillEnd - origin) },
      aPrefillS: Math.round(prefillEnd - prefillStart) / 1000,
      policy: variant.policy,
      hold: variant.hold,
    };
  } finally {
    await undo?.();
  }
}
