/**
 * The setting `sharing.policy` (docs/sharing-policy.md): how exobar shares this Mac's
 * one GPU between its models. `off`: every runner prefills at full speed. `decode_first`:
 * while a neighbour streams, a prefilling runner is paced (smaller chunks, a pause after
 * each), bounded by a ceiling on its added prefill time.
 */
import { z } from 'zod';

export const SharingPolicySchema = z.enum(['off', 'decode_first']);
export type SharingPolicy = z.infer<typeof SharingPolicySchema>;

/**
 * The default: off. decode_first helped on a loaded machine and hurt on a quiet one (real
 * MLX on a CPU, docs/sharing-policy.md, "Measured"), and nothing is measured on Metal yet.
 */
export const DEFAULT_SHARING_POLICY: SharingPolicy = 'off';
