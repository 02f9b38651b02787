/**
 * The header's one-glance answer to "is everything fine?", worst first: a lost
 * connection or a failed runner or launch beats a warning, which beats a model still
 * loading, which beats "All good". Instance states come from the one derivation in
 * shared/instance-state.ts (the tray and the safe launch use the same).
 */
import type { ConnectionProblem } from '../../../shared/bridge';
import type { Snapshot } from '../../../shared/snapshot';
import type { ConnectionState } from '../store/exobar-store';
import { CONNECTION_WORDS, pageConnection } from './connection-view';
import { exoUnreachable, fastSynchMismatch, instanceLifecycle, instancesSeenNow, lifecycleCounts } from '../../../shared/instance-state';

export interface OverallState {
  level: 'ok' | 'loading' | 'warning' | 'failed' | 'connecting';
  headline: string;
  /** Instances serving now (a model still loading is not counted, nor exo's while exo does not answer). */
  running: number;
  warnings: number;
  /**
   * Instances on their way up (loading or restarting). Flat numbers only: the header
   * selects this object with a shallow comparison, so a nested object would be new on
   * every read and re-render forever.
   */
  loading: number;
  /** An attached exo does not answer: its models are not counted, and the header says so instead. */
  exoUnreachable: boolean;
}

/** The header's state for this snapshot and connection. */
export function overallState(snapshot: Snapshot, connection: ConnectionState, received: boolean, problem: ConnectionProblem | null = null): OverallState {
  // exo's last-seen instances are no evidence of anything once exo stops answering (its warning says so).
  const seen = instancesSeenNow(snapshot);
  const lifecycle = lifecycleCounts(seen);
  const mismatches = seen.filter(fastSynchMismatch).length;
  const hasMismatchWarning = snapshot.warnings.some((w) => w.code === 'fast_synch_mismatch');
  const warnings = snapshot.warnings.length + (hasMismatchWarning ? 0 : mismatches);
  const starting = lifecycle.loading + lifecycle.restarting;
  const base = { running: lifecycle.serving, warnings, loading: starting, exoUnreachable: exoUnreachable(snapshot) };
  if (connection === 'error') return { level: 'failed', headline: connectionHeadline(problem, received), ...base };
  if (!received) return { level: 'connecting', headline: 'Connecting…', ...base };
  if (lifecycle.failed > 0) {
    const failed = seen.find((i) => instanceLifecycle(i) === 'failed');
    return { level: 'failed', headline: lifecycle.failed === 1 ? `${failed?.modelName} failed` : `${lifecycle.failed} runners failed`, ...base };
  }
  if (snapshot.launch?.state === 'failed') return { level: 'failed', headline: 'Launch failed', ...base };
  if (warnings > 0) return { level: 'warning', headline: warnings === 1 ? 'Warning' : `${warnings} warnings`, ...base };
  if (starting > 0) {
    const verb = lifecycle.restarting > 0 && lifecycle.loading === 0 ? 'restarting' : 'loading';
    return { level: 'loading', headline: `${starting === 1 ? '1 model' : `${starting} models`} ${verb}`, ...base };
  }
  if (snapshot.launch?.state === 'running') return { level: 'loading', headline: 'Launching', ...base };
  return { level: 'ok', headline: 'All good', ...base };
}

/** The header's words for connection trouble, the same the footer and the access message say (connection-view.ts). */
export function connectionHeadline(problem: ConnectionProblem | null, received: boolean): string {
  return CONNECTION_WORDS[pageConnection('error', problem, received)].header ?? 'Connecting…';
}
