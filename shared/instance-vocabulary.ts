/**
 * The two most basic words of an instance, used by the requests (api.ts) and the
 * snapshot (snapshot.ts) alike: a leaf, so neither borrows them from the other.
 */
import { z } from 'zod';

/** How the instance's shards talk: ring (TCP) or JACCL (RDMA over Thunderbolt). */
export const InstanceTypeSchema = z.enum(['ring', 'jaccl']);
/** The operator's fast-synch choice for an instance: the policy's, or forced on or off. */
export const FastSynchOverrideSchema = z.enum(['auto', 'on', 'off']);
