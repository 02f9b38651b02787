/**
 * The header's one-glance answer to "is everything fine?", worst first: a lost
 * connection or a failed runner or launch beats a warning, which beats "All good".
 */
import type { Snapshot } from '../../../shared/snapshot';
import type { ConnectionState } from '../store/exobar-store';
import { fastSynchMismatch, isFailed, isServing } from '../../../shared/instance-state';

export interface OverallState {
  level: 'ok' | 'warning' | 'failed' | 'connecting';
  headline: string;
  running: number;
  warnings: number;
}

export function overallState(snapshot: Snapshot, connection: ConnectionState, received: boolean): OverallState {
  const running = snapshot.instances.filter(isServing).length;
  const mismatches = snapshot.instances.filter(fastSynchMismatch).length;
  const hasMismatchWarning = snapshot.warnings.some((w) => w.code === 'fast_synch_mismatch');
  const warnings = snapshot.warnings.length + (hasMismatchWarning ? 0 : mismatches);
  const base = { running, warnings };
  if (connection === 'error') return { level: 'failed', headline: 'Disconnected', ...base };
  if (!received) return { level: 'connecting', headline: 'Connecting…', ...base };
  const failed = snapshot.instances.filter(isFailed);
  if (failed.length > 0) {
    return { level: 'failed', headline: failed.length === 1 ? `${failed[0]?.modelName} failed` : `${failed.length} runners failed`, ...base };
  }
  if (snapshot.launch?.state === 'failed') return { level: 'failed', headline: 'Launch failed', ...base };
  if (warnings > 0) return { level: 'warning', headline: warnings === 1 ? 'Warning' : `${warnings} warnings`, ...base };
  return { level: 'ok', headline: 'All good', ...base };
}
