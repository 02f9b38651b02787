import type { Warning } from '../../../../shared/snapshot';
import { useActions, useExobar } from '../../store/store-context';
import { StopButton } from '../stop/stop-button';

/**
 * The buttons of a load that stalled. `exo_load_stalled`: Stop (the instance's own Stop,
 * which deletes it on exo) and Place again (the lost model's action: exobar stops the
 * stalled instance and places the model again as it was, behind the same checks).
 * `runner_load_stalled` (this Mac's runner): Stop. Either warning clears once the load
 * moves again or the instance is gone.
 */
export function LoadStallActions({ warning }: { warning: Warning }) {
  const { placeLostModelAgain } = useActions();
  const model = warning.model;
  const instanceId = warning.instanceIds[0];
  const placing = useExobar((s) => model !== undefined && s.busy[`lost:${model}`] === true);
  if ((warning.code !== 'exo_load_stalled' && warning.code !== 'runner_load_stalled') || instanceId === undefined) return null;
  const name = model?.split('/').pop() ?? instanceId;
  return (
    <div className="row">
      {warning.code === 'exo_load_stalled' && model !== undefined && (
        <button type="button" className="button primary" disabled={placing} onClick={() => void placeLostModelAgain(model)}>
          {placing ? 'Placing…' : 'Place again'}
        </button>
      )}
      <StopButton instanceId={instanceId} modelName={name} />
    </div>
  );
}
