/**
 * How a request's phase reads on a card. A runner's words and tone are every view's
 * (shared/status-words.ts).
 */
import type { RequestPhase } from '../../../shared/snapshot';

/** A request's phase on a card. */
export const PHASE_LABEL: Record<RequestPhase, string> = {
  queued: 'Queued',
  loading: 'Loading the model',
  // Written to the runner, which takes new requests only between its steps.
  awaiting_ack: 'Waiting for the runner',
  prefilling: 'Prefilling',
  decoding: 'Decoding',
  cancelling: 'Cancelling',
};
