import type { LocalInstanceSnapshot } from '../../../../shared/snapshot';
import { fastSynchMismatch } from '../../../../shared/instance-state';
import { JARGON } from '../../lib/jargon';

const onOff = (enabled: boolean): string => (enabled ? 'on' : 'off');

/** The runner's MLX_METAL_FAST_SYNCH value, why the policy chose it, and what the runner reported. */
export function FastSynchRow({ instance }: { instance: LocalInstanceSnapshot }) {
  const { enabled, reason, reported } = instance.fastSynch;
  const mismatch = fastSynchMismatch(instance);
  return (
    <div className="row fast-synch">
      <span className="label explained" title={JARGON.fastSynch}>
        Fast synch
      </span>
      <span className={`value ${enabled ? 'fs-on' : 'fs-off'}`} data-testid="fast-synch">
        {onOff(enabled)}
      </span>
      <span className="muted">— {reason}</span>
      {mismatch && reported !== null && (
        <span className="badge bad" role="alert">
          runner reports {onOff(reported)}
        </span>
      )}
    </div>
  );
}
