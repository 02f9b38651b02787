/**
 * How fast one runner works, learned from what it writes: seconds per prompt token
 * (from prefill progress, one 4096-token chunk after another), the fixed cost of
 * starting a prefill, and seconds per decode step (from consecutive tokens of one
 * request). The catalog's figures are the prior, worth a few samples, so a new runner
 * starts from them and a runner slower than its catalog figure (a busy or smaller Mac)
 * soon moves the estimate. Times are real milliseconds: a sim runner's prior is scaled
 * by its time scale before it gets here.
 */
import type { CatalogModel } from '../../../shared/catalog';

/** The figures a runner is expected to reach before anything is measured, real milliseconds. */
export interface RatePrior {
  /** CPU work per admitted request plus the GPU's fixed prefill cost. */
  prefillFixedMs: number;
  /** One prompt token of prefill on an idle GPU. */
  msPerPromptToken: number;
  /** One decode step for a batch of one on an idle GPU. */
  decodeStepMs: number;
  /** Extra decode-step time per additional request in the batch, as a fraction. */
  batchStepGrowth: number;
}

/**
 * For a model without calibrated figures (an MLX model on this Mac): slow enough for a
 * large dense model, so the prior never makes a healthy runner look stuck; its own
 * measurements bring the deadline down within a few requests.
 */
export const UNKNOWN_MODEL_PRIOR: RatePrior = {
  prefillFixedMs: 1000,
  msPerPromptToken: 5,
  decodeStepMs: 100,
  batchStepGrowth: 0.1,
};

/** The prior for `model`: its catalog timings scaled to real ms (a sim runs `timeScale` times real time). */
export function ratePriorFor(model: CatalogModel, timeScale: number): RatePrior {
  if (!model.sim) return UNKNOWN_MODEL_PRIOR;
  const ms = 1000 * (model.engine === 'sim' ? timeScale : 1);
  return {
    prefillFixedMs: (model.sim.admitOverheadS + model.sim.prefillFixedS) * ms,
    msPerPromptToken: ms / model.sim.prefillTokensPerS,
    decodeStepMs: model.sim.decodeStepS * ms,
    batchStepGrowth: model.sim.batchStepGrowth,
  };
}

/** Samples kept per measure: recent history only, so an estimate follows a changed machine. */
const WINDOW = 20;
/** How many samples the prior counts for. */
const PRIOR_WEIGHT = 3;

class RecentMean {
  private readonly samples: number[] = [];
  constructor(private readonly prior: number) {}

  add(value: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.samples.push(value);
    if (this.samples.length > WINDOW) this.samples.shift();
  }

  get value(): number {
    const sum = this.samples.reduce((a, b) => a + b, 0);
    return (this.prior * PRIOR_WEIGHT + sum) / (PRIOR_WEIGHT + this.samples.length);
  }

  get count(): number {
    return this.samples.length;
  }
}

export class RunnerRates {
  private readonly msPerToken: RecentMean;
  private readonly fixedMs: RecentMean;
  private readonly stepMs: RecentMean;

  constructor(readonly prior: RatePrior) {
    this.msPerToken = new RecentMean(prior.msPerPromptToken);
    this.fixedMs = new RecentMean(prior.prefillFixedMs);
    this.stepMs = new RecentMean(prior.decodeStepMs);
  }

  /**
   * A prefill progress event: `tokens` more prompt tokens took `elapsedMs` since the
   * runner's previous line. A first chunk also pays the fixed cost, learned apart.
   */
  recordPrefillChunk(tokens: number, elapsedMs: number, firstChunk: boolean): void {
    if (tokens <= 0) return;
    if (!firstChunk) this.msPerToken.add(elapsedMs / tokens);
    else this.fixedMs.add(Math.max(0, elapsedMs - tokens * this.msPerToken.value));
  }

  /** Two consecutive tokens of one request, `batch` requests decoding. */
  recordDecodeStep(elapsedMs: number, batch: number): void {
    this.stepMs.add(elapsedMs / (1 + this.prior.batchStepGrowth * Math.max(0, batch - 1)));
  }

  /** The longest a prefill step of `tokens` prompt tokens should take, plus the decode step ending it. */
  prefillStepMs(tokens: number, batch: number): number {
    return this.fixedMs.value + tokens * this.msPerToken.value + this.decodeStepMs(batch);
  }

  decodeStepMs(batch: number): number {
    return this.stepMs.value * (1 + this.prior.batchStepGrowth * Math.max(0, batch - 1));
  }

  /** The current estimates, for the diagnosis. */
  estimates(): { msPerPromptToken: number; prefillFixedMs: number; decodeStepMs: number; samples: number } {
    return {
      msPerPromptToken: this.msPerToken.value,
      prefillFixedMs: this.fixedMs.value,
      decodeStepMs: this.stepMs.value,
      samples: this.msPerToken.count + this.fixedMs.count + this.stepMs.count,
    };
  }
}
