/**
 * The defaults of models on demand, where the core reads them. The settings schema
 * (shared/api.ts, `onDemand`) holds the operator's values.
 */

/** An idle instance with no time to live of its own unloads after 30 minutes (LM Studio's and oMLX's order of magnitude). */
export const DEFAULT_IDLE_TTL_SECONDS = 30 * 60;

/** The settings' `onDemand.idleTtlSeconds` as the node takes it: -1 means never (null). */
export function ttlFromSetting(seconds: number): number | null {
  return seconds < 0 ? null : seconds;
}
