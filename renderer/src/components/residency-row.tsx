import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { residencyWords } from '../../../shared/residency';
import { ResidencyControls } from './residency-controls';

/**
 * Whether a local model stays loaded: "pinned", "in use", "idle, unloads in 12 min"
 * (the same words as the tray), a Pin toggle and Unload now. The countdown is as of the
 * snapshot's time; the node renews the snapshot at least every 30 s while one runs.
 */
export function ResidencyRow({ instance, now }: { instance: LocalInstanceSnapshot; now: number }) {
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
