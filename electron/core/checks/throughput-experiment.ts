/**
 * Experiment 3, throughput under load: K streaming clients per model for S seconds
 * (exo's measurement: 8 per model, where fast synch on collapsed to 2.2 and 7.2
 * requests per minute). With the fast-synch comparison the same again with both
 * runners relaunched with fast synch on: only on Apple silicon and only with the
 * operator's consent; the watchdog ends a run whose runner goes silent, and its
 * requests fail, which stops the run.
 */
import type { z } from 'zod';
import type { ThroughputExperimentSchema, ThroughputRunSchema } from '../../../shared/sharing-check';
import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { uniquePrompt } from './check-requests';
import { throwIfCancelled, unlessCancelled, type CheckContext } from './check-context';

type Run = z.infer<typeof ThroughputRunSchema>;

/** The risk, in words, the operator must accept before the fast-synch run. */
export const FAST_SYNCH_RISK =
  'With fast synch on, two MLX processes on one GPU can collapse throughput or wedge the GPU at 100 % until the Mac is rebooted (killing the runner may not free it).';

const ANSWER_TOKENS = 32;

async function loadRun(ctx: CheckContext, streams: number, seconds: number, fastSynch: boolean): Promise<Run> {
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  let stoppedEarly: string | null = null;
  const tally = new Map<string, { completed: number; failed: number; tokens: number }>();
  const client = async (model: string) => {
    const t = tally.get(model) ?? { completed: 0, failed: 0, tokens: 0 };
    tally.set(model, t);
    while (performance.now() < deadline && stoppedEarly === null) {
      throwIfCancelled(ctx.signal);
      const r = ctx.requests.submit(model, uniquePrompt(40), ANSWER_TOKENS);
      const timer = setTimeout(() => ctx.requests.cancel(r), Math.max(0, deadline - performance.now()));
      await r.done;
      clearTimeout(timer);
      if (r.outcome === 'finished') {
        t.completed += 1;
        t.tokens += r.tokenTimes.length;
      } else if (r.outcome === 'failed') {
        t.failed += 1;
        // A runner the watchdog found silent (or that died) ends the run: load on a wedged GPU proves nothing more.
        stoppedEarly ??= `${model}: ${r.error ?? 'a request failed'}`;
      }
    }
  };
  const clients = [ctx.a.id, ctx.b.id].flatMap((model) => Array.from({ length: streams }, () => client(model)));
  await unlessCancelled(ctx.signal, Promise.all(clients));
  const elapsedS = Math.max(0.001, (performance.now() - started) / 1000);
  return {
    fastSynch,
    seconds: Math.round(elapsedS * 10) / 10,
    streams,
    models: [ctx.a.id, ctx.b.id].map((model) => {
      const t = tally.get(model)!;
      return { model, completed: t.completed, failed: t.failed, requestsPerMinute: (t.completed / elapsedS) * 60, tokensPerSecond: t.tokens / elapsedS };
    }),
    stoppedEarly,
  };
}

export interface ThroughputOptions {
  streams: number;
  seconds: number;
  fastSynchCompare: boolean;
  consent: boolean;
  appleSilicon: boolean;
  /** Through the proxy to an attached exo: exobar does not relaunch exo's runners, so no fast-synch run. */
  onExo?: boolean;
}

export async function runThroughputExperiment(
  ctx: CheckContext,
  options: ThroughputOptions,
  at: [number, number],
): Promise<z.infer<typeof ThroughputExperimentSchema>> {
  const compare = options.fastSynchCompare && options.appleSilicon && options.consent && !options.onExo;
  const mid = compare ? (at[0] + at[1]) / 2 : at[1];
  ctx.progress(`Experiment 3 (throughput): ${options.streams} streaming clients per model for ${options.seconds} s, fast synch off`, at[0]);
  const off = await loadRun(ctx, options.streams, options.seconds, false);
  if (!compare) {
    const reason = !options.fastSynchCompare
      ? 'not asked for (--fast-synch-compare)'
      : options.onExo
        ? "not run on exo: exobar does not relaunch exo's runners with fast synch changed (exo sets it per node, at its start)"
        : !options.appleSilicon
          ? 'not run: fast synch matters only on an Apple GPU, and this machine is not Apple silicon'
          : `not run: the operator did not consent to the risk. ${FAST_SYNCH_RISK}`;
    return { ran: true, fastSynchOff: off, fastSynchOn: { ran: false, reason } };
  }
  ctx.progress('Experiment 3 (throughput): both runners relaunched with fast synch on', mid);
  const ids = instancesOf(ctx);
  const before = ids.map((i) => ({ id: i.id, override: i.fastSynch.override }));
  try {
    for (const i of before) await ctx.node.updateInstance(i.id, { fastSynch: 'on', mode: 'drain', acknowledgeRisk: true });
    for (const i of before) await ctx.node.waitForReady(i.id, 120_000);
    const on = await loadRun(ctx, options.streams, options.seconds, true);
    return { ran: true, fastSynchOff: off, fastSynchOn: on };
  } finally {
    await ctx.requests.cancelAll();
    for (const i of before) await ctx.node.updateInstance(i.id, { fastSynch: i.override, mode: 'cancel', acknowledgeRisk: true }).catch(() => undefined);
  }
}

function instancesOf(ctx: CheckContext): LocalInstanceSnapshot[] {
  return ctx.node.snapshot().instances.filter((i): i is LocalInstanceSnapshot => i.source === 'local' && (i.model === ctx.a.id || i.model === ctx.b.id));
}
