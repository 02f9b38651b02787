/**
 * What a fast-synch plan means for this Mac's exo: the value it starts with, whether the
 * exo that runs now must restart for it (exo reads EXO_FAST_SYNCH once, at start), and
 * the words that ask the operator's consent to a restart. Pure.
 */
import { decideExoFastSynch, type ExoFastSynchPlan } from '../../../shared/exo-fast-synch';
import { ExoProcessError } from './exo-process-error';

/** An instance exo runs with a shard on this Mac (a restart deletes it). */
export interface SpanningInstance {
  id: string;
  model: string;
}

/** What a plan means for the exo that runs now. */
export type ExoFastSynchCheck =
  { ok: false; code: 'fast_synch_shared_gpu'; message: string } | { ok: true; enabled: boolean; reason: string; restartRequired: boolean; message: string };

export interface ExoRestartRequest {
  /** The operator agreed that the restart deletes the instances that span this Mac. */
  consent: boolean;
  /** A new plan for fast synch; the current value is kept without one. */
  plan?: ExoFastSynchPlan;
  spanningInstances?: readonly SpanningInstance[];
}

/** The fast-synch value exo is to run with, and why. */
export interface FastSynchDecision {
  enabled: boolean;
  reason: string;
}

/** Nothing planned: fast synch off. */
export const EMPTY_PLAN: ExoFastSynchPlan = { instances: [], override: 'auto', acknowledgeRisk: false };

/** The plan's decision; throws {@link ExoProcessError} `fast_synch_shared_gpu` for an unacknowledged risky override. */
export function decideFastSynch(plan: ExoFastSynchPlan): FastSynchDecision {
  const decision = decideExoFastSynch(plan);
  if (!decision.ok) throw new ExoProcessError(decision.code, decision.message);
  return { enabled: decision.enabled, reason: decision.reason };
}

/** What `plan` means against `live`, the fast synch of the exo that runs now (null: none runs). */
export function checkFastSynchAgainst(plan: ExoFastSynchPlan, live: boolean | null, spanningInstances: readonly SpanningInstance[]): ExoFastSynchCheck {
  const decision = decideExoFastSynch(plan);
  if (!decision.ok) return decision;
  if (live === null || live === decision.enabled) {
    const message =
      live === null
        ? `exo will start with fast synch ${decision.enabled ? 'on' : 'off'} (${decision.reason})`
        : `exo already runs with fast synch ${live ? 'on' : 'off'}`;
    return { ok: true, enabled: decision.enabled, reason: decision.reason, restartRequired: false, message };
  }
  const message = restartMessage(decision, spanningInstances);
  return { ok: true, enabled: decision.enabled, reason: decision.reason, restartRequired: true, message };
}

/** The words a restart asks consent with: why exo restarts, and which instances that deletes. */
export function restartMessage(decision: FastSynchDecision, spanning: readonly SpanningInstance[], why: 'fast_synch' | 'restart' = 'fast_synch'): string {
  const lead =
    why === 'fast_synch'
      ? `exo must restart to turn fast synch ${decision.enabled ? 'on' : 'off'} (${decision.reason}): exo reads EXO_FAST_SYNCH once, when it starts.`
      : `Restarting exo (fast synch ${decision.enabled ? 'on' : 'off'}: ${decision.reason}).`;
  const lost =
    spanning.length === 0
      ? 'A restart deletes every instance that spans this Mac (exo removes instances whose node left the cluster).'
      : `A restart deletes every instance that spans this Mac: ${spanning.map((i) => `${i.model} (${i.id})`).join(', ')}.`;
  return `${lead} ${lost} Send "consent": true to restart.`;
}
