import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { residencyWords } from '../../../shared/residency';
import { useActions, useExobar } from '../store/store-context';

/**
 * Whether a local model stays loaded: "pinned", "in use", "idle, unloads in 12 min"
 * (the same words as the tray), a Pin toggle and Unload now. The countdown is as of the
 * snapshot's time; the node renews the snapshot at least every 30 s while one runs.
 */
export function ResidencyRow({ instance, now }: { instance: LocalInstanceSnapshot; now: number }) {
  const { unloadInstance, setPinned } = useActions();
  const busy = useExobar((s) => s.busy[`unload:${instance.id}`] === true || s.busy[`pin:${instance.id}`] === true);
  const { residency } = instance;
  const idle = instance.queue.requests.length === 0;
  return (
    <div className="row small residency" data-testid="residency-row">
      <span className="muted">{residency.loadedOnDemand ? 'Loaded on request' : 'Resident'}</span>
      <span data-testid="residency-words">{residencyWords(residency, now)}</span>
      <span className="spacer" />
      <label className="toggle">
        <input
          type="checkbox"
          aria-label={`Pin ${instance.modelName}`}
          checked={residency.pinned}
          disabled={busy}
          onChange={(e) => void setPinned(instance.id, e.currentTarget.checked)}
        />
        Pinned
      </label>
      <button
        type="button"
        className="button small"
        aria-label={`Unload ${instance.modelName} now`}
        disabled={busy || !idle}
        title={idle ? 'Stop its runner now; a request loads it again' : 'It has requests queued or in flight'}
        onClick={() => void unloadInstance(instance.id)}
      >
        Unload now
      </button>
    </div>
  );
}
