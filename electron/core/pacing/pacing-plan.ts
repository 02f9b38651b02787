/**
 * The numbers of the decode-first sharing policy (docs/sharing-policy.md): how a
 * prefilling runner is paced while a neighbour on the same GPU decodes, and how long it
 * may be paced before its ceiling releases it. Pure functions of measured step times.
 *
 * Why these shapes: a neighbour's decode step waits behind whatever the GPU is running,
 * so the prefill is cut into chunks short enough that a decode step never waits long
 * (`chunkMs`), and after each chunk the prefill pauses long enough for one decode step to
 * run alone (`pauseMs` ≈ the neighbour's measured step). The added prefill time is then
 * about pause / chunk of the paced time, and the ceiling bounds its total.
 */
import { DEFAULT_PREFILL_CHUNK_TOKENS, MAX_PACING_PAUSE_MS, MIN_PACED_CHUNK_TOKENS, type PrefillPacing } from '../../../shared/runner-protocol';

/** What the plan is tuned by (defaults measured with the bench, docs/sharing-policy.md). */
export interface PacingTuning {
  /** A paced chunk lasts about this long (ms of prefill work). */
  chunkMs: number;
  /** The pause is the neighbour's decode step times this. */
  pausePerDecodeStep: number;
  /** Longest pause, ms. */
  maxPauseMs: number;
  /** Added prefill time at most this fraction of the prompt's full-speed prefill; then full speed. */
  ceiling: number;
  /** Pace only once a streaming neighbour's live ITL (median of its last gaps beside the prefill) reaches this multiple of its solo ITL. */
  engageItlRatio: number;
  /** Release once that live ITL is back at or below this multiple of solo (hysteresis: below engageItlRatio). */
  releaseItlRatio: number;
  /** The live ITL is the median of this many of the neighbour's latest gaps beside a prefill. */
  itlWindowGaps: number;
  /** Solo gaps (in the sharing window) needed before a solo ITL is trusted; fewer: interference unknown, no pacing. */
  minSoloGaps: number;
  /** A pacing released for a recovered ITL only after it ran this long (ms; doubled at each new engagement of the same prefill), so the decision does not flap. */
  minPacedMs: number;
}

export const DEFAULT_PACING_TUNING: PacingTuning = {
  chunkMs: 60,
  pausePerDecodeStep: 1.5,
  maxPauseMs: 60,
  ceiling: 0.15,
  engageItlRatio: 1.2,
  releaseItlRatio: 1.05,
  itlWindowGaps: 6,
  minSoloGaps: 5,
  minPacedMs: 500,
};

/** The runner's measured speed, as RunnerRates gives it. */
export interface MeasuredRates {
  /** ms for a prefill chunk of `tokens` (fixed part included) at batch `batch`. */
  prefillStepMs(tokens: number, batch: number): number;
  decodeStepMs(batch: number): number;
}

/** ms per prompt token, from the rates (the fixed part of a chunk excluded). */
function msPerToken(rates: MeasuredRates): number {
  const big = rates.prefillStepMs(DEFAULT_PREFILL_CHUNK_TOKENS, 1);
  const small = rates.prefillStepMs(MIN_PACED_CHUNK_TOKENS, 1);
  return Math.max(1e-6, (big - small) / (DEFAULT_PREFILL_CHUNK_TOKENS - MIN_PACED_CHUNK_TOKENS));
}

/**
 * The pacing for a prefilling runner (`rates`) beside neighbours that decode with
 * steps of `neighbourStepMs` (the slowest of them).
 */
export function pacedPacing(rates: MeasuredRates, neighbourStepMs: number, tuning: PacingTuning = DEFAULT_PACING_TUNING): PrefillPacing {
  const perToken = msPerToken(rates);
  const tokens = Math.round(tuning.chunkMs / perToken / MIN_PACED_CHUNK_TOKENS) * MIN_PACED_CHUNK_TOKENS;
  const chunkTokens = Math.min(DEFAULT_PREFILL_CHUNK_TOKENS, Math.max(MIN_PACED_CHUNK_TOKENS, tokens));
  const pauseMs = Math.round(Math.min(tuning.maxPauseMs, MAX_PACING_PAUSE_MS, Math.max(1, neighbourStepMs * tuning.pausePerDecodeStep)));
  return { chunkTokens, pauseMs };
}

/** Prefill time pacing adds per ms of paced wall time: pause / (pause + chunk). */
export function addedFraction(pacing: PrefillPacing, rates: MeasuredRates): number {
  const chunkMs = pacing.chunkTokens === null ? rates.prefillStepMs(DEFAULT_PREFILL_CHUNK_TOKENS, 1) : msPerToken(rates) * pacing.chunkTokens;
  return pacing.pauseMs / (pacing.pauseMs + Math.max(0.1, chunkMs));
}

/** The full-speed prefill time of `tokens` prompt tokens, ms. */
export function fullSpeedPrefillMs(tokens: number, rates: MeasuredRates): number {
  return Math.max(0, tokens) * msPerToken(rates);
}
