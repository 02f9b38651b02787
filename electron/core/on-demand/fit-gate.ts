/**
 * The fit check a load on request passes: the memory the OS can hand out now, less the
 * headroom a launch keeps (the safe pair's memory check, shared/safe-pair-plan.ts), is
 * what the room plan may fill. One estimate for every launch: no second one here.
 */
import { DEFAULT_HEADROOM_BYTES } from '../../../shared/safe-pair-plan';
import { readSystemMemory, type SystemMemory } from '../system-memory';

export interface FitGateOptions {
  /** Replaces the OS reading (tests). */
  readMemory?: () => Promise<SystemMemory>;
  headroomBytes?: number;
}

/** Bytes a new model may take now (free after headroom), never negative. */
export async function availableForLoad(options: FitGateOptions = {}): Promise<number> {
  const memory = await (options.readMemory ?? (() => readSystemMemory()))();
  return Math.max(0, memory.freeBytes - (options.headroomBytes ?? DEFAULT_HEADROOM_BYTES));
}
