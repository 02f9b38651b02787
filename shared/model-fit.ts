/**
 * Each catalog model's fit on this Mac right now, in one word and its figures: what the
 * Models panel shows beside every model ("fits: needs 1.6 GiB; 18.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 16.0 GiB usable"). Shared
 * because `GET /api/models/fit` answers it and the renderer shows it
 * (electron/core/fit/model-fits.ts computes it with the same check every launch uses).
 */
import { z } from 'zod';
import { FitCheckSchema, type FitCheck } from './fit-check';
import { formatMemory } from './memory-words';

/** fits; tight: fits, but leaves less than {@link TIGHT_MARGIN} of the room; does_not_fit: a launch is refused without "launch anyway". */
export const FitVerdictSchema = z.enum(['fits', 'tight', 'does_not_fit']);
export type FitVerdict = z.infer<typeof FitVerdictSchema>;

/**
 * A fit that leaves less than this share of the room it fits in (free memory after
 * headroom, or the GPU limit's room, whichever is smaller) is tight: a second model or
 * a longer context would not fit beside it.
 */
export const TIGHT_MARGIN = 0.2;

export const ModelFitSchema = z.object({
  model: z.string(),
  /** True when an instance of the model holds memory already: a launch reuses it, so no check is made. */
  running: z.boolean(),
  verdict: FitVerdictSchema.nullable(),
  /** "fits: needs 1.6 GiB; 18.0 GiB free, …", or "running" for a running model. */
  words: z.string(),
  fit: FitCheckSchema.nullable(),
});
export type ModelFit = z.infer<typeof ModelFitSchema>;

/** `GET /api/models/fit`'s answer. */
export const ModelFitsAnswerSchema = z.object({ models: z.array(ModelFitSchema) });
export type ModelFitsAnswer = z.infer<typeof ModelFitsAnswerSchema>;

/** The room the models fit in: free memory less the headroom, and on a Mac what the GPU's wired limit leaves. */
function roomBytes(fit: FitCheck): number {
  const usable = Math.max(0, fit.freeBytes - fit.headroomBytes);
  if (fit.gpuLimitBytes === null) return usable;
  return Math.min(usable, Math.max(0, fit.gpuLimitBytes - fit.gpuInUseBytes));
}

/** The check in one word. */
export function fitVerdict(fit: FitCheck): FitVerdict {
  if (!fit.fits) return 'does_not_fit';
  const room = roomBytes(fit);
  return room - fit.neededBytes < room * TIGHT_MARGIN ? 'tight' : 'fits';
}

const VERDICT_WORDS: Record<FitVerdict, string> = { fits: 'fits', tight: 'tight', does_not_fit: 'does not fit' };

/** "tight: needs 6.1 GiB; 7.0 GiB free, …; leaves 0.9 GiB": the verdict, then the check's own figures. */
export function fitWords(fit: FitCheck): string {
  const verdict = fitVerdict(fit);
  const room = verdict === 'tight' ? `; leaves ${formatMemory(roomBytes(fit) - fit.neededBytes)}` : '';
  return `${VERDICT_WORDS[verdict]}: ${fit.summary}${room}`;
}
