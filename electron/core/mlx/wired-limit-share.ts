/**
 * Each MLX runner's share of the GPU working set, for its wired limit.
 *
 * mlx-lm's BatchGenerator wires the GPU's whole recommended working set for its own
 * process; with two runners on one Mac both claim all of it and memory is
 * over-committed. Instead each runner gets a share proportional to its model's size
 * (weights dominate what a runner keeps wired; KV caches grow with the same model
 * dimensions), so the shares add up to the recommended working set and no more.
 */
import { z } from 'zod';

export const WiredLimitInputSchema = z.object({
  /** Metal's max_recommended_working_set_size on this machine, bytes. */
  recommendedWorkingSetBytes: z.number().int().positive(),
  /** The MLX runners on this GPU: an id and the model's size on disk, bytes. */
  runners: z.array(z.object({ id: z.string().min(1), modelBytes: z.number().int().positive() })).min(1),
});
export type WiredLimitInput = z.infer<typeof WiredLimitInputSchema>;

export interface WiredLimitShare {
  id: string;
  wiredLimitBytes: number;
  /** True when the runners' models together exceed the working set: they cannot all stay wired. */
  overCommitted: boolean;
}

/**
 * The wired limit of every runner sharing one GPU, proportional to model size. Throws
 * a readable error for invalid input (it comes from the catalog and the machine probe).
 */
export function mlxWiredLimitShares(input: WiredLimitInput): WiredLimitShare[] {
  const parsed = WiredLimitInputSchema.safeParse(input);
  if (!parsed.success) throw new Error(`invalid wired-limit input: ${z.prettifyError(parsed.error)}`);
  const { recommendedWorkingSetBytes, runners } = parsed.data;
  const total = runners.reduce((sum, r) => sum + r.modelBytes, 0);
  const overCommitted = total > recommendedWorkingSetBytes;
  return runners.map((r) => ({
    id: r.id,
    // floor: the shares never add up to more than the working set
    wiredLimitBytes: Math.max(1, Math.floor((recommendedWorkingSetBytes * r.modelBytes) / total)),
    overCommitted,
  }));
}
