import type { Warning } from '../../../../shared/snapshot';
import { useActions, useExobar } from '../../store/store-context';

/**
 * The buttons of an `exo_model_lost` warning: Place again (the same placement as before,
 * through exo; exo's reason becomes the notice when it cannot) and Dismiss. The warning
 * itself clears once exo serves the model again.
 */
export function LostModelActions({ warning }: { warning: Warning }) {
  const { placeLostModelAgain, dismissLostModel } = useActions();
  const model = warning.model;
  const busy = useExobar((s) => model !== undefined && s.busy[`lost:${model}`] === true);
  if (warning.code !== 'exo_model_lost' || model === undefined) return null;
  return (
    <div className="row">
      <button type="button" className="button primary" disabled={busy} onClick={() => void placeLostModelAgain(model)}>
        {busy ? 'Placing…' : 'Place again'}
      </button>
      <button type="button" className="button" disabled={busy} onClick={() => void dismissLostModel(model)}>
        Dismiss
      </button>
    </div>
  );
}
