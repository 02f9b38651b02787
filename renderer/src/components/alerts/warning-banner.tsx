import { isLocal } from '../../../../shared/instance-state';
import type { Warning } from '../../../../shared/snapshot';
import { canFixWarning } from '../../store/exobar-store';
import { useActions, useExobar } from '../../store/store-context';
import { LoadStallActions } from './load-stall-actions';
import { LostModelActions } from './lost-model-actions';

/**
 * One shared-GPU warning: what is wrong, the risk, and the fix. For two ring models
 * with fast synch on, one button relaunches the affected runners with it off: MLX reads
 * MLX_METAL_FAST_SYNCH once per process, so only a relaunch changes it.
 */
export function WarningBanner({ warning }: { warning: Warning }) {
  const { fixWarning } = useActions();
  const fixing = useExobar((s) => s.busy[`fix:${warning.code}`] === true);
  const instances = useExobar((s) => s.snapshot.instances);
  const local = instances.filter(isLocal).filter((i) => warning.instanceIds.includes(i.id));
  const affected = local.filter((i) => i.fastSynch.enabled);
  return (
    <section className="banner warning" role="alert" data-testid="warning-banner" data-code={warning.code}>
      <h2>
        {warning.title}
        {warning.assumed && (
          <span className="badge warn" data-testid="warning-assumed" title="exo does not publish a Mac's fast-synch value: exo's default (on) is assumed there">
            assumed
          </span>
        )}
      </h2>
      <p>{warning.risk}</p>
      <p className="fix">{warning.fix}</p>
      {/* Only runners this node supervises can be relaunched from here; exo's are restarted in exo. */}
      {canFixWarning(warning) && local.length > 0 && (
        <button type="button" className="button primary" disabled={fixing || affected.length === 0} onClick={() => void fixWarning(warning)}>
          {fixing ? 'Relaunching…' : `Relaunch ${affected.length === 1 ? affected[0]?.modelName : `${affected.length} runners`} with fast synch off`}
        </button>
      )}
      <LostModelActions warning={warning} />
      <LoadStallActions warning={warning} />
    </section>
  );
}

export function WarningBanners() {
  const warnings = useExobar((s) => s.snapshot.warnings);
  if (warnings.length === 0) return null;
  return (
    <>
      {warnings.map((w) => (
        <WarningBanner key={`${w.code}:${w.instanceIds.join(',')}`} warning={w} />
      ))}
    </>
  );
}
