/**
 * When an instance may not unload, and why in words: never with requests queued or in
 * flight, never a pinned one by itself (idle or evicted), only by the operator.
 */
import { NodeError } from '../events/node-error';
import type { UnloadReason } from '../events/node-event';

/** What the check reads of an instance. */
export interface UnloadCandidate {
  id: string;
  model: { id: string };
  /** Requests queued or in flight. */
  load: number;
  residency: { pinned: boolean };
}

/** Null when `instance` may unload for `reason`; else the 409 that says why. */
export function unloadRefusal(instance: UnloadCandidate, reason: UnloadReason): NodeError | null {
  if (instance.load > 0) {
    return new NodeError(
      'requests_in_flight',
      `${instance.model.id} (${instance.id}) has ${instance.load} request${instance.load === 1 ? '' : 's'} queued or in flight; it unloads once idle, or stop it to end them`,
      409,
    );
  }
  if (instance.residency.pinned && reason !== 'operator') {
    return new NodeError('instance_pinned', `${instance.model.id} (${instance.id}) is pinned: only the operator unloads it`, 409);
  }
  return null;
}
