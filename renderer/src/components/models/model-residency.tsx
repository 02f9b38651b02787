/**
 * A catalog model's residency in the Models panel: the tray's words ("unloaded",
 * "loading", "loaded · unloads in 4 min", "pinned") and what the operator can do about
 * it: Load an unloaded model now (a ring instance through a launch's gates: a refusal
 * is the notice, in words), Pin or unpin a loaded one, Unload it now while it is idle.
 */
import type { LocalInstanceSnapshot } from '../../../../shared/snapshot';
import { residencyGlance } from '../../../../shared/residency-glance';
import { instanceLifecycle } from '../../../../shared/instance-state';
import { useActions, useExobar } from '../../store/store-context';
import { ResidencyControls } from '../common/residency-controls';
import { useSnapshotNow } from '../../lib/use-snapshot-now';

export function ModelResidency({ model, name, instance }: { model: string; name: string; instance: LocalInstanceSnapshot | undefined }) {
  const { loadModel } = useActions();
  const now = useSnapshotNow();
  const busy = useExobar((s) => s.busy[`load:${model}`] === true);
  const words = residencyGlance(instance, now);
  const serving = instance !== undefined && instanceLifecycle(instance) === 'serving';
  return (
    <div className="row small model-residency" data-testid="model-residency">
      <span data-testid="model-residency-words" className={instance ? '' : 'muted'}>
        {words}
      </span>
      <span className="spacer" />
      {!instance && (
        <button type="button" className="button small" aria-label={`Load ${name}`} disabled={busy} onClick={() => void loadModel(model)}>
          {busy ? 'Loading…' : 'Load'}
        </button>
      )}
      {instance && serving && <ResidencyControls instance={instance} name={name} labels={{ pin: 'Pin', unload: 'Unload', unloadSuffix: '' }} />}
    </div>
  );
}
