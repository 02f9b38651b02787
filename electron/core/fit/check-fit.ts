/**
 * The fit check: does a launch's memory need fit in what this Mac has free now, and
 * under the GPU's wired limit? Pure: the estimates (model-memory.ts) and the machine's
 * figures (fit-context.ts) come in, a verdict in figures and words goes out. Every
 * launch path asks it (instance launch, the safe pair, loads on request).
 */
import type { FitCheck, FitModelEstimate } from '../../../shared/fit-check';
import { fitSentence, formatMemory } from '../../../shared/memory-words';
import { DEFAULT_HEADROOM_BYTES } from '../../../shared/safe-pair-plan';

/** The machine's side of the check. */
export interface FitContext {
  /** Memory the OS can hand out now (electron/core/system-memory.ts). */
  freeBytes: number;
  /** Kept free beyond the models' need; defaults to the safe pair's 2 GiB. */
  headroomBytes?: number;
  /** The GPU's wired limit (Metal's recommended working set); null where there is none. */
  gpuLimitBytes: number | null;
  /** The estimate of what the models already on the GPU use of that limit. */
  gpuInUseBytes?: number;
}

/** What launching past a failed check risks; said wherever "launch anyway" is offered. */
export const FIT_RISK =
  'Launching anyway may push macOS into compressing and swapping memory, slowing every model on this Mac, ' +
  'and the runner may be killed for lack of memory or fail to load.';

/**
 * Checks `models` (each already estimated at its context length) against `context`.
 * Fits when their total need is at most the free memory less the headroom and, on a
 * Mac, at most what the GPU's wired limit leaves beside the models already on it.
 */
export function checkFit(models: readonly FitModelEstimate[], context: FitContext): FitCheck {
  const headroomBytes = Math.max(0, context.headroomBytes ?? DEFAULT_HEADROOM_BYTES);
  const freeBytes = Math.max(0, context.freeBytes);
  const gpuInUseBytes = Math.max(0, context.gpuInUseBytes ?? 0);
  const neededBytes = models.reduce((sum, m) => sum + m.neededBytes, 0);
  const problems: string[] = [];

  const usable = Math.max(0, freeBytes - headroomBytes);
  if (neededBytes > usable) {
    problems.push(`Not enough memory: ${fitSentence({ neededBytes, freeBytes, headroomBytes })}.`);
  }
  let gpuWords = '';
  if (context.gpuLimitBytes !== null) {
    const left = Math.max(0, context.gpuLimitBytes - gpuInUseBytes);
    gpuWords = `; ${formatMemory(left)} of the GPU's ${formatMemory(context.gpuLimitBytes)} limit left`;
    if (neededBytes > left) {
      problems.push(
        `Over the GPU's wired limit: needs ${formatMemory(neededBytes)}, ${formatMemory(left)} of its ${formatMemory(context.gpuLimitBytes)} left beside the models on it.`,
      );
    }
  }
  const unknown = models.filter((m) => m.kvCacheBytes === null).map((m) => m.model);
  const unknownWords = unknown.length > 0 ? ` (KV cache unknown for ${unknown.join(', ')}: weights only)` : '';
  const fits = problems.length === 0;
  return {
    fits,
    models: [...models],
    neededBytes,
    freeBytes,
    headroomBytes,
    gpuLimitBytes: context.gpuLimitBytes,
    gpuInUseBytes,
    summary: `${fitSentence({ neededBytes, freeBytes, headroomBytes })}${gpuWords}${unknownWords}`,
    problems,
    risk: fits ? null : FIT_RISK,
  };
}
