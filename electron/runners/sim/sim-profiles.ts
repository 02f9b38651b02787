/**
 * Named timing profiles the sim runner can take instead of its catalog model's figures
 * (`--profile NAME`). `cpu-tiny` is the MLX runner's own engine measured on a tiny real
 * model on MLX's CPU backend by `npm run calibrate-sim`
 * (electron/runners/mlx/tools/calibrate_sim.py writes cpu-tiny-profile.json): with it the
 * sim's schedule and prompt cache keep the real runner's proportions on this kind of
 * machine (a prompt cache hit's time to first token against a miss's, a prefill chunk's
 * share beside a decode step), so the sim tests and the bench show what real models do.
 * The file also keeps what was measured beside the fitted figures: the sim's test checks
 * its own hit/miss ratio against them.
 */
import { z } from 'zod';
import { SimTimingsSchema, type SimTimings } from '../../../shared/catalog';
import { SimProfileNameSchema, type SimProfileName } from '../../../shared/runner-protocol';
import cpuTiny from './cpu-tiny-profile.json';

export const SimProfileSchema = z.object({
  /** The figures a profile replaces; the model keeps its own load figures and layers. */
  timings: SimTimingsSchema.pick({
    admitOverheadS: true,
    prefillFixedS: true,
    prefillTokensPerS: true,
    decodeStepS: true,
    batchStepGrowth: true,
  }),
  /** What the calibration saw, for the checks (times in seconds, the fastest of its trials). */
  measured: z.looseObject({
    family: z.string(),
    promptTokens: z.number().int().positive(),
    missTtftS: z.number().positive(),
    hitTtftS: z.number().positive(),
    hitCachedTokens: z.number().int().nonnegative(),
  }),
});
export type SimProfile = z.infer<typeof SimProfileSchema>;

export const SIM_PROFILES: Record<SimProfileName, SimProfile> = { 'cpu-tiny': SimProfileSchema.parse(cpuTiny) };

export function isSimProfileName(name: string): name is SimProfileName {
  return SimProfileNameSchema.safeParse(name).success;
}

/** A model's sim figures with a profile's in place of its own. */
export function withSimProfile(timings: SimTimings, profile: SimProfile): SimTimings {
  return { ...timings, ...profile.timings };
}
