/**
 * This Mac's exo as the snapshot shows it: the manager's state as the section
 * `exoProcess` (null while exobar has never started it: idle shows nothing), and the
 * warning its fast-synch check raises (`exo_fast_synch_mismatch`) among every part's.
 */
import { exoFastSynchMismatchWarning, type ExoProcessState } from '../../../shared/exo-process';
import type { SnapshotSections } from '../app-state/snapshot-hub';
import type { ExoProcessManager } from './exo-process-manager';

/** Registers the section and its warning with the hub and follows the manager's changes; returns the stop. */
export function showExoProcess(manager: Pick<ExoProcessManager, 'subscribe'>, hub: SnapshotSections): () => void {
  let shown: ExoProcessState | null = null;
  const section = hub.section('exoProcess', () => ({ exoProcess: shown }));
  const warnings = hub.warnings('exoProcess', () => {
    const mismatch = shown ? exoFastSynchMismatchWarning(shown) : null;
    return mismatch ? [mismatch] : [];
  });
  const unsubscribe = manager.subscribe((state) => {
    shown = state.status === 'idle' ? null : state;
    section.changed();
  });
  return () => {
    unsubscribe();
    section.remove();
    warnings.remove();
  };
}
