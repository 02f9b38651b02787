/**
 * How long the fake exo's runners take, per model: the figures the sim engine uses
 * (shared/catalog.ts), taken from the measurement in docs (Llama-3.2-1B alone 0.23 s
 * to first token; 0.38-0.40 s beside a 3B prefill; the 3B prefills ~30k tokens in
 * ~19 s). `timeScale` shrinks every duration for tests.
 */
import { LLAMA_1B, LLAMA_3B, QWEN_30B } from '../scenarios';
import { DEFAULT_PREFILL_CHUNK_TOKENS } from '../../../../shared/runner-protocol';

export interface FakeModelTiming {
  /** GPU time every prefill pays whatever its length. */
  prefillFixedS: number;
  prefillTokensPerS: number;
  /** One decode step for a batch of one on an idle GPU. */
  decodeStepS: number;
}

/** exo prefills in chunks of this many tokens, with a progress event after each. */
export const PREFILL_CHUNK_TOKENS = DEFAULT_PREFILL_CHUNK_TOKENS;

/**
 * A step slows by this factor while another runner on the same Mac computes: the
 * measured 0.23 s → 0.38 s of the 1B beside a prefilling 3B.
 */
export const SHARED_GPU_FACTOR = 1.65;

const TIMINGS: Record<string, FakeModelTiming> = {
  [LLAMA_1B]: { prefillFixedS: 0.154, prefillTokensPerS: 12_000, decodeStepS: 0.004 },
  [LLAMA_3B]: { prefillFixedS: 0.154, prefillTokensPerS: 1_590, decodeStepS: 0.009 },
  [QWEN_30B]: { prefillFixedS: 0.2, prefillTokensPerS: 2_400, decodeStepS: 0.014 },
};

const DEFAULT_TIMING: FakeModelTiming = { prefillFixedS: 0.15, prefillTokensPerS: 3_000, decodeStepS: 0.01 };

/** The timing of a model (a middling one for models without figures). */
export function timingOf(model: string): FakeModelTiming {
  return TIMINGS[model] ?? DEFAULT_TIMING;
}
