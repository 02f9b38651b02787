/** `shared_gpu`: its own compute ran slower than solo while another runner kept the GPU busy. */
import type { Cause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';
import { computeFacts } from './compute-facts';

/** Another runner must have been busy for at least this share of a request's compute to blame the shared GPU. */
const MIN_SHARED_FRACTION = 0.25;

/**
 * The verdict for a compute part slowed by a neighbour: another runner busy for long
 * enough, and (when a solo sample exists) at least `sharedGpuSlowdown` times slower
 * than solo. Null otherwise (then it is own_prefill). Names fast synch when a runner
 * involved has it on, because that collapses two MLX processes' throughput.
 */
export const sharedGpu: Cause = (ctx, r) => {
  const { t, reference } = r;
  const { serviceMs, slowdown, busy, sharedFraction, evidence } = computeFacts(ctx, r);
  // Sharing explains a slowdown only for the time it lasted: a long prompt that overlapped
  // another runner for a moment is still its own prefill.
  const sharedLongEnough = sharedFraction === null || sharedFraction >= MIN_SHARED_FRACTION;
  if (!(busy.length > 0 && sharedLongEnough && (slowdown === null || slowdown >= ctx.opts.sharedGpuSlowdown))) return null;
  const sharedFastSynch = busy.some((b) => b.fastSynch) || ctx.fastSynchOn.includes(t.instanceId);
  const hazard = sharedFastSynch
    ? ' Fast synch is on for a runner involved: with two MLX processes on one GPU that can collapse throughput, far beyond plain sharing.'
    : '';
  const against =
    slowdown !== null
      ? `${slowdown.toFixed(2)}x its solo time for a comparable prompt (${ms(reference.serviceMs!)} over ${reference.samples} solo samples)`
      : 'no solo sample of a comparable prompt to compare with (unconfirmed)';
  return {
    cause: 'shared_gpu',
    bugToReport: false,
    explanation:
      `Its own prefill and first token took ${ms(serviceMs)}, ${against}, while ${busy.map((b) => b.instanceId).join(', ')} ` +
      `kept the shared GPU busy.${hazard}`,
    evidence: { ...evidence, confirmed: slowdown !== null },
  };
};
