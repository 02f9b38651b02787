import type { LocalInstanceSnapshot } from '../../../../shared/snapshot';
import { residencyWords } from '../../../../shared/residency';
import { ResidencyControls } from '../common/residency-controls';
import { useSnapshotNow } from '../../lib/use-snapshot-now';

/**
 * Whether a local model stays loaded: "pinned", "in use", "idle, unloads in 12 min"
 * (the same words as the tray), a Pin toggle and Unload now. The countdown runs from the
 * snapshot's time, once a second (`now` fixes it, for tests).
 */
export function ResidencyRow({ instance, now: fixedNow }: { instance: LocalInstanceSnapshot; now?: number }) {
  const liveNow = useSnapshotNow();
  const now = fixedNow ?? liveNow;
  const { residency } = instance;
  return (
    <div className="row small residency" data-testid="residency-row">
      <span className="muted">{residency.loadedOnDemand ? 'Loaded on request' : 'Resident'}</span>
      <span data-testid="residency-words">{residencyWords(residency, now)}</span>
      <span className="spacer" />
      <ResidencyControls instance={instance} name={instance.modelName} labels={{ pin: 'Pinned', unload: 'Unload now', unloadSuffix: ' now' }} />
    </div>
  );
}
