/**
 * The sharing policy's decisions in words, for the diagnosis: one entry per paced
 * stretch of a prefill, from the node's `pacing_released` events and the
 * `pacing_engaged` before each (the figure that engaged it: "paced Llama 3.2 3B's
 * prefill while Llama 3.2 1B streamed (its ITL 1.8× solo): +12 % prefill time"), and
 * one per prefill it chose not to pace (`pacing_not_needed`).
 */
import type { NodeEvent } from '../events/node-event';
import type { ItlFigure, PacingReleaseReason } from './pacing-controller';

export interface PacingDecision {
  instanceId: string;
  model: string;
  neighbours: string[];
  /** `paced`: a paced stretch, ended by `reason`; `not_paced`: a prefill beside a stream the policy left at full speed. */
  decision: 'paced' | 'not_paced';
  reason: PacingReleaseReason | null;
  /** Monotonic ms of the release (or of the prefill's end). */
  t: number;
  pacedMs: number;
  /** Prefill time the pauses added, estimated, as a share of the prompt's full-speed prefill. */
  addedPct: number;
  /** The figure that engaged it (paced) or the highest seen (not paced; null: solo ITL unknown). */
  itl: ItlFigure | null;
  words: string;
}

function why(reason: PacingReleaseReason, itl: ItlFigure | null | undefined): string {
  switch (reason) {
    case 'neighbour_stopped':
      return 'until the stream ended';
    case 'neighbour_recovered':
      return itl ? `until ${itl.neighbour}'s ITL was back at ${times(itl.ratio)} its solo` : "until the stream's ITL was back near its solo";
    case 'prefill_done':
      return 'until its prefill ended';
    case 'ceiling':
      return 'until its ceiling on added prefill time, then at full speed';
    case 'policy_off':
      return 'until the policy was turned off';
    case 'runner_gone':
      return 'until its runner went away';
  }
}

function list(names: string[]): string {
  if (names.length <= 1) return names[0] ?? 'a neighbour';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const times = (ratio: number) => `${ratio.toFixed(2)}×`;

/** "Llama 3.2 1B's ITL 1.80× its solo 12.0 ms". */
function figureWords(f: ItlFigure): string {
  return `${f.neighbour}'s ITL ${f.itlMs} ms, ${times(f.ratio)} its solo ${f.soloItlMs} ms`;
}

/** Every pacing decision in `events`, oldest first. */
export function pacingDecisions(events: readonly NodeEvent[]): PacingDecision[] {
  const engagedBy = new Map<string, ItlFigure | null>();
  return events.flatMap((e): PacingDecision[] => {
    if (e.kind === 'pacing_engaged') {
      engagedBy.set(e.instanceId, e.data.trigger ?? null);
      return [];
    }
    if (e.kind === 'pacing_not_needed') {
      const { model, neighbours, peak, engageItlRatio } = e.data;
      const figure = peak
        ? `${figureWords(peak)} (pacing starts at ${times(engageItlRatio)})`
        : `${list(neighbours)}'s solo ITL was not known yet, so interference could not be told`;
      const words = `did not pace ${model}'s prefill while ${list(neighbours)} streamed: ${figure}`;
      return [{ instanceId: e.instanceId, model, neighbours, decision: 'not_paced', reason: null, t: e.t, pacedMs: 0, addedPct: 0, itl: peak, words }];
    }
    if (e.kind !== 'pacing_released') return [];
    const { model, neighbours, reason, pacedMs, addedPct, itl } = e.data;
    const trigger = engagedBy.get(e.instanceId) ?? null;
    const because = trigger ? ` (${figureWords(trigger)})` : '';
    const words = `paced ${model}'s prefill while ${list(neighbours)} streamed${because}: +${Math.round(addedPct)} % prefill time (${why(reason, itl)})`;
    return [{ instanceId: e.instanceId, model, neighbours, decision: 'paced', reason, t: e.t, pacedMs, addedPct, itl: trigger, words }];
  });
}
