/**
 * Experiment 1, the seed's table on this machine: B's time to first token alone, while
 * A prefills a long prompt, and while A prefills with a second A request queued behind
 * it (the case where exo's blocking plan loop stalled B for 15 s). On an attached exo
 * it runs once with exobar's hold on and once with it off (`runVariants`): the hold is
 * what keeps B from waiting behind the queued A request there.
 */
import type { z } from 'zod';
import type { TtftExperimentSchema, TtftRun } from '../../../shared/sharing-check';
import { ttftS, uniquePrompt } from './check-requests';
import { longPromptTokens, sleep, unlessCancelled, type CheckContext } from './check-context';
import { runVariants, type DecodeExperimentOptions, type RunVariant } from './decode-experiment';

const SHORT_PROMPT = 40;

/** B's short request, sent while A's long prompt prefills (at A's acknowledgement plus a short wait, as exo did 3.5 s in). */
async function bBeside(ctx: CheckContext, promptTokens: number, queued: boolean): Promise<{ ttft: number | null; aPrefillS: number | null }> {
  const a = ctx.requests.submit(ctx.a.id, uniquePrompt(promptTokens), 1);
  await unlessCancelled(ctx.signal, a.acknowledged);
  const second = queued ? ctx.requests.submit(ctx.a.id, uniquePrompt(SHORT_PROMPT), 1) : null;
  await sleep(200);
  const b = ctx.requests.submit(ctx.b.id, uniquePrompt(SHORT_PROMPT), 1);
  await unlessCancelled(ctx.signal, Promise.all([a.done, b.done, second?.done]));
  const aPrefillS = a.acknowledgedAt !== null && a.tokenTimes[0] !== undefined ? (a.tokenTimes[0] - a.acknowledgedAt) / 1000 : null;
  // B must have answered while A was still prefilling for the figure to mean "beside".
  return { ttft: ttftS(b), aPrefillS };
}

type TtftOptions = { promptTokens: number; baseline: boolean } & Pick<DecodeExperimentOptions, 'holds' | 'applyHold'>;

export async function runTtftExperiment(ctx: CheckContext, options: TtftOptions, at: [number, number]): Promise<z.infer<typeof TtftExperimentSchema>> {
  // Only the hold changes experiment 1 (no policy paces a first token): one run per hold on exo, else one.
  const variants = runVariants({ holds: options.holds, applyHold: options.applyHold });
  const runs: TtftRun[] = [];
  for (const [i, variant] of variants.entries()) {
    const share = (at[1] - at[0]) / variants.length;
    runs.push(await ttftOnce(ctx, options, variant, [at[0] + share * i, at[0] + share * (i + 1)]));
  }
  return { ran: true, ...runs[0]!, runs };
}

async function ttftOnce(ctx: CheckContext, options: TtftOptions, variant: RunVariant, at: [number, number]): Promise<TtftRun> {
  const undo = variant.apply ? await variant.apply() : null;
  try {
    return await measure(ctx, options, variant, at);
  } finally {
    await undo?.();
  }
}

async function measure(ctx: CheckContext, options: TtftOptions, variant: RunVariant, at: [number, number]): Promise<TtftRun> {
  const promptTokens = longPromptTokens(ctx.a, options.promptTokens);
  const step = (what: string, i: number) => ctx.progress(`Experiment 1 (time to first token${variant.label}): ${what}`, at[0] + ((at[1] - at[0]) * i) / 3);
  step(`${ctx.b.name} alone`, 0);
  const alone = ctx.requests.submit(ctx.b.id, uniquePrompt(SHORT_PROMPT), 1);
  await unlessCancelled(ctx.signal, alone.done);
  step(`${ctx.b.name} while ${ctx.a.name} prefills ${promptTokens} tokens`, 1);
  const busy = await bBeside(ctx, promptTokens, false);
  step(`${ctx.b.name} while ${ctx.a.name} prefills with a request queued`, 2);
  const queued = await bBeside(ctx, promptTokens, true);
  return {
    bAloneS: ttftS(alone),
    bWhileAPrefillsS: busy.ttft,
    bWhileAPrefillsWithQueuedS: queued.ttft,
    baselineQueuedS: null,
    baselineNote: options.baseline
      ? "not run: the blocking dispatch is the benchmark rig's (npm run bench, the stall rows); a running node always dispatches without waiting"
      : null,
    promptTokens,
    aPrefillS: busy.aPrefillS,
    hold: variant.hold,
  };
}
