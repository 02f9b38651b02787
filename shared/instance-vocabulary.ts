/**
 * The basic words of an instance and its runner, used by the requests (api.ts), the
 * snapshot (snapshot.ts) and the core alike: a leaf, so none borrows them from another,
 * and each word is a zod enum written once (no literal union elsewhere repeats it).
 */
import { z } from 'zod';

/** How the instance's shards talk: ring (TCP) or JACCL (RDMA over Thunderbolt). */
export const InstanceTypeSchema = z.enum(['ring', 'jaccl']);
export type InstanceType = z.infer<typeof InstanceTypeSchema>;

/** The engine a local runner runs (shared/catalog.ts's Engine). */
export const EngineSchema = z.enum(['sim', 'mlx']);
export type Engine = z.infer<typeof EngineSchema>;

/**
 * A cancel the supervisor keeps for a task: `held` while the runner has not acknowledged
 * the task (a cancel then would be lost), `sent` once written, until the runner confirms.
 */
export const PendingCancelStateSchema = z.enum(['held', 'sent']);
export type PendingCancelState = z.infer<typeof PendingCancelStateSchema>;

/**
 * Why a runner went down, one word per cause from the supervisor to the snapshot's
 * `lastExit.cause` and the restart metric's label: crashed, found stuck by the watchdog,
 * its fast synch not the one asked for, failed to start, or stopped on purpose.
 */
export const DownCauseSchema = z.enum(['crashed', 'stuck', 'fast_synch_mismatch', 'startup_failed', 'stopped']);
export type DownCause = z.infer<typeof DownCauseSchema>;
/** The operator's fast-synch choice for an instance: the policy's, or forced on or off. */
export const FastSynchOverrideSchema = z.enum(['auto', 'on', 'off']);
