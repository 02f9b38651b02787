/**
 * The sharing policy's decisions in words, for the diagnosis: one entry per paced
 * stretch of a prefill, from the node's `pacing_released` events ("paced Llama 3.2 3B's
 * prefill while Llama 3.2 1B streamed: +12 % prefill time").
 */
import type { NodeEvent } from '../node/node-event';
import type { PacingReleaseReason } from './pacing-controller';

export interface PacingDecision {
  instanceId: string;
  model: string;
  neighbours: string[];
  reason: PacingReleaseReason;
  /** Monotonic ms of the release. */
  t: number;
  pacedMs: number;
  /** Prefill time the pauses added, estimated, as a share of the prompt's full-speed prefill. */
  addedPct: number;
  words: string;
}

const WHY: Record<PacingReleaseReason, string> = {
  neighbour_stopped: 'until the stream ended',
  prefill_done: 'until its prefill ended',
  ceiling: 'until its ceiling on added prefill time, then at full speed',
  policy_off: 'until the policy was turned off',
  runner_gone: 'until its runner went away',
};

function list(names: string[]): string {
  if (names.length <= 1) return names[0] ?? 'a neighbour';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** Every pacing decision in `events`, oldest first. */
export function pacingDecisions(events: readonly NodeEvent[]): PacingDecision[] {
  return events.flatMap((e) => {
    if (e.kind !== 'pacing_released') return [];
    const { model, neighbours, reason, pacedMs, addedPct } = e.data;
    const words = `paced ${model}'s prefill while ${list(neighbours)} streamed: +${Math.round(addedPct)} % prefill time (${WHY[reason]})`;
    return [{ instanceId: e.instanceId, model, neighbours, reason, t: e.t, pacedMs, addedPct, words }];
  });
}
