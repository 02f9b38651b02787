/**
 * Experiment 4, an idle neighbour: B decodes with A resident but idle (loaded, no
 * request of its own), then again with A unloaded; same prompt length and token count.
 * oMLX users measured two idle resident models cutting another model's decode on an M3
 * Ultra from 74-86 to 46-62 tokens/s (jundot/omlx #3209): this is that measurement on
 * the operator's machine. A is unloaded through the target's own means (the node stops
 * its runner; on exo its instance is deleted through exo's API) and brought back when
 * it was there before the check.
 */
import type { z } from 'zod';
import type { IdleNeighbourExperimentSchema } from '../../../shared/sharing-check';
import { uniquePrompt } from './check-requests';
import { sleep, throwIfCancelled, unlessCancelled, type CheckContext } from './check-context';
import { gapsOf, ratioOf, spanOf } from './decode-spans';

/** How the target unloads A and brings it back. */
export interface NeighbourResidency {
  /** Unloads every instance of A; resolves once it is gone. */
  unload(): Promise<void>;
  /** Brings A back (only called when A ran before the check). */
  reload(): Promise<void>;
  /** In words, for the result: how A was unloaded and brought back. */
  how: string;
}

/** B's decode over `tokens` gaps, from a fresh short prompt. */
async function bDecodes(ctx: CheckContext, tokens: number): Promise<ReturnType<typeof spanOf>> {
  const b = ctx.requests.submit(ctx.b.id, uniquePrompt(40), tokens + 1);
  while (b.tokenTimes.length <= tokens && b.endedAt === null) {
    throwIfCancelled(ctx.signal);
    await sleep(10);
  }
  ctx.requests.cancel(b);
  await unlessCancelled(ctx.signal, b.done);
  if (b.outcome === 'failed') throw new Error(`experiment 4: ${ctx.b.name}'s request failed: ${b.error ?? 'no reason given'}`);
  return spanOf(gapsOf(b.tokenTimes));
}

export async function runIdleNeighbourExperiment(
  ctx: CheckContext,
  options: { decodeTokens: number; residency: NeighbourResidency; reload: boolean },
  at: [number, number],
): Promise<z.infer<typeof IdleNeighbourExperimentSchema>> {
  // Twice experiment 2's span: the effect reported is a steady rate, not a transient.
  const tokens = options.decodeTokens * 2;
  const say = (what: string, f: number) => ctx.progress(`Experiment 4 (idle neighbour): ${what}`, at[0] + (at[1] - at[0]) * f);
  say(`${ctx.b.name} decodes with ${ctx.a.name} resident and idle`, 0);
  const resident = await bDecodes(ctx, tokens);
  say(`unloading ${ctx.a.name}`, 0.35);
  await unlessCancelled(ctx.signal, options.residency.unload());
  say(`${ctx.b.name} decodes with ${ctx.a.name} unloaded`, 0.5);
  const unloaded = await bDecodes(ctx, tokens);
  if (options.reload) {
    say(`bringing ${ctx.a.name} back`, 0.8);
    await unlessCancelled(ctx.signal, options.residency.reload());
  }
  return {
    ran: true,
    resident,
    unloaded,
    decodeRatio: ratioOf(resident.decodeTokensPerSecond, unloaded.decodeTokensPerSecond),
    itlP95Ratio: ratioOf(resident.itlP95Ms, unloaded.itlP95Ms),
    how: options.reload ? options.residency.how : `${options.residency.how.split(';')[0]}; the check had launched it, so it stays unloaded`,
  };
}
