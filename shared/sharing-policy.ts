/**
 * The setting `sharing.policy` (docs/sharing-policy.md): how exobar shares this Mac's
 * one GPU between its models. `off`: every runner prefills at full speed. `decode_first`:
 * while a neighbour streams and the prefill slows its stream (live ITL above 1.2× solo),
 * a prefilling runner is paced (smaller chunks, a pause after each), bounded by a
 * ceiling on its added prefill time.
 */
import { z } from 'zod';

export const SharingPolicySchema = z.enum(['off', 'decode_first']);
export type SharingPolicy = z.infer<typeof SharingPolicySchema>;

/**
 * The default: decode_first, adaptive (it paces only a prefill that really slows a
 * neighbour's stream). In the bench it met both targets on real MLX and on the sim in
 * every run of this build (docs/sharing-policy.md, "Measured"); nothing is measured on
 * Metal yet.
 */
export const DEFAULT_SHARING_POLICY: SharingPolicy = 'decode_first';
