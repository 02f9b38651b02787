/**
 * The settings of models on demand as the core takes them. Their defaults have one home,
 * the settings schema (shared/api.ts, `onDemand`): nothing here writes a value of its own.
 */
import { defaultSettings } from '../../../shared/api';

/** The settings' `onDemand.idleTtlSeconds` as the node takes it: -1 means never (null). */
export function ttlFromSetting(seconds: number): number | null {
  return seconds < 0 ? null : seconds;
}

/** The idle time to live of a part started without the settings (a test's node): the settings schema's default, as the node takes it. */
export function defaultIdleTtl(): number | null {
  return ttlFromSetting(defaultSettings().onDemand.idleTtlSeconds);
}
