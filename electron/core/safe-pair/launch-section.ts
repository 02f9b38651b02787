/**
 * The safe launch's progress as the snapshot's `launch` section: the last progress a
 * launch reported, local or on the attached exo (null: none yet, or cleared).
 */
import type { LaunchProgress } from '../../../shared/snapshot';
import type { SnapshotSections } from '../app-state/snapshot-hub';

/** Shows a launch's progress (null clears it). */
export type ShowLaunch = (progress: LaunchProgress | null) => void;

/** Registers the section with the hub; returns what each launch reports its progress to. */
export function launchSection(hub: SnapshotSections): ShowLaunch {
  let shown: LaunchProgress | null = null;
  const section = hub.section('launch', () => ({ launch: shown }));
  return (progress) => {
    shown = progress;
    section.changed();
  };
}
