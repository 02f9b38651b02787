/**
 * Pin and Unload for a loaded local model, as the model card's residency row and the
 * Models panel both show them: the toggle pins or unpins it (a pinned model never
 * unloads by itself), the button unloads it now, disabled while it has work.
 */
import type { LocalInstanceSnapshot } from '../../../../shared/snapshot';
import { useActions, useExobar } from '../../store/store-context';

export function ResidencyControls({
  instance,
  name,
  labels,
}: {
  instance: LocalInstanceSnapshot;
  /** The model's name in the controls' accessible names. */
  name: string;
  /** The toggle's and the button's words, and the button's accessible name after the model's name. */
  labels: { pin: string; unload: string; unloadSuffix: string };
}) {
  const { unloadInstance, setPinned } = useActions();
  const busy = useExobar((s) => s.busy[`unload:${instance.id}`] === true || s.busy[`pin:${instance.id}`] === true);
  const idle = instance.queue.requests.length === 0;
  return (
    <>
      <label className="toggle">
        <input
          type="checkbox"
          aria-label={`Pin ${name}`}
          checked={instance.residency.pinned}
          disabled={busy}
          onChange={(e) => void setPinned(instance.id, e.currentTarget.checked)}
        />
        {labels.pin}
      </label>
      <button
        type="button"
        className="button small"
        aria-label={`Unload ${name}${labels.unloadSuffix}`}
        disabled={busy || !idle}
        title={idle ? 'Stop its runner now; a request loads it again' : 'It has requests queued or in flight'}
        onClick={() => void unloadInstance(instance.id)}
      >
        {labels.unload}
      </button>
    </>
  );
}
