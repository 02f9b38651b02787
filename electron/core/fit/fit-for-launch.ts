/**
 * The fit check of a launch on this node right now: the models to start, estimated at
 * the context length, against the memory free now and the GPU's wired limit beside the
 * local instances already running. What the instance launch, the safe pair and loads
 * on request call.
 */
import type { CatalogModel } from '../../../shared/catalog';
import { DEFAULT_FIT_CONTEXT_TOKENS, type FitCheck } from '../../../shared/fit-check';
import { readSystemMemory, type SystemMemory } from '../system-memory';
import { checkFit } from './check-fit';
import { readGpuWiredLimit } from './gpu-wired-limit';
import { estimateModelMemory } from './model-memory';

export interface FitForLaunchInput {
  /** The models the launch starts. */
  models: readonly CatalogModel[];
  /** The models of the local instances already running (their weights stay on the GPU). */
  running: readonly CatalogModel[];
  /** Context tokens each new model is checked at; defaults to {@link DEFAULT_FIT_CONTEXT_TOKENS}. */
  contextTokens?: number;
  headroomBytes?: number;
  /** The setting `runner.promptCacheBytes`: each model's prompt cache cap counts as used memory. */
  promptCacheBytes?: number | null;
  /** Replace the machine's readings (tests, or a caller that has them). */
  readMemory?: () => Promise<SystemMemory>;
  readGpuLimit?: (totalBytes: number) => Promise<number | null>;
}

/**
 * Checks the launch. Free memory already excludes what running models hold; the GPU
 * limit does not, so the running models' estimates (at the same context) count against it.
 */
export async function fitForLaunch(input: FitForLaunchInput): Promise<FitCheck> {
  const tokens = input.contextTokens ?? DEFAULT_FIT_CONTEXT_TOKENS;
  const memory = await (input.readMemory ?? (() => readSystemMemory()))();
  const gpuLimitBytes = await (input.readGpuLimit ?? ((t) => readGpuWiredLimit(t)))(memory.totalBytes);
  const cache = input.promptCacheBytes ?? null;
  const estimates = await Promise.all(input.models.map((m) => estimateModelMemory(m, tokens, cache)));
  const running = gpuLimitBytes === null ? [] : await Promise.all(input.running.map((m) => estimateModelMemory(m, tokens, cache)));
  return checkFit(estimates, {
    freeBytes: memory.freeBytes,
    headroomBytes: input.headroomBytes,
    gpuLimitBytes,
    gpuInUseBytes: running.reduce((sum, e) => sum + e.neededBytes, 0),
  });
}
