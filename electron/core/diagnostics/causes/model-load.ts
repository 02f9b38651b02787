/** `model_load`: the request came while its model was loading, and the load was most of its wait. */
import type { DiagnosisContext, FallbackCause } from '../diagnosis-context';
import { ms } from '../diagnosis-format';

/**
 * The verdict for a wait dominated by the load part. Never a bug: a load on request
 * (or one the request joined) takes as long as the weights take to read.
 */
export const modelLoad: FallbackCause = (_ctx: DiagnosisContext, { t, parts }) => {
  const loadMs = parts.loadMs ?? 0;
  return {
    cause: 'model_load',
    bugToReport: false,
    explanation: `Waited ${ms(loadMs)} for ${t.model} to load: the request came while its model was loading (a load on request, or one it joined).`,
    evidence: { loadMs },
  };
};
