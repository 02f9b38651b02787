import { formatClock } from '../../../../shared/time-words';
import type { LocalInstanceSnapshot } from '../../../../shared/snapshot';
import { localRunnerTone, localRunnerWords } from '../../../../shared/status-words';
import { ProgressBar } from '../common/progress-bar';

/** The runner's state in plain words (from its one state first; exo's status name in the tooltip), its loading progress, and why it is down. */
export function RunnerStatusRow({ instance }: { instance: LocalInstanceSnapshot }) {
  const { state, status, restarts, restartAt, lastExit, attention, pid } = instance.runner;
  const downForGood = state === 'failed' || state === 'needs_attention';
  const tone = localRunnerTone(state, status);
  return (
    <div className="runner-status">
      <div className="row">
        <span className={`dot tone-${tone}`} aria-hidden="true" />
        <span className="status-name ellipsis" data-testid="runner-status" data-kind={status.kind} title={`exo status: ${status.kind}`}>
          {localRunnerWords(state, status)}
        </span>
        <span className="spacer" />
        {pid !== null && <span className="muted small">pid {pid}</span>}
        {restarts > 0 && <span className="muted small">{restarts === 1 ? '1 restart' : `${restarts} restarts`}</span>}
      </div>
      {status.kind === 'RunnerLoading' && <ProgressBar value={status.layersLoaded} max={status.totalLayers} label={`Loading ${instance.modelName}`} />}
      {downForGood && (
        <p className="failure" role="alert" data-testid="runner-state" data-state={state}>
          {state === 'needs_attention' ? 'Needs attention: ' : 'Failed: '}
          {lastExit?.message ?? (status.kind === 'RunnerFailed' ? status.errorMessage : '')}
          {attention && <span className="muted"> ({attention})</span>}
        </p>
      )}
      {state === 'restarting' && (
        <p className="muted small" data-testid="runner-state" data-state={state}>
          {lastExit?.cause === 'stuck' ? 'Stuck' : 'Stopped'}: {lastExit?.message ?? ''}; restarting
          {restartAt !== null ? ` at ${formatClock(restartAt)}` : ''}
        </p>
      )}
      {!downForGood && state !== 'restarting' && lastExit && restarts > 0 && <p className="muted small">Last exit: {lastExit.message}</p>}
    </div>
  );
}
