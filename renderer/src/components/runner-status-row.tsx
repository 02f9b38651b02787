import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { formatCount } from '../lib/format';
import { runnerTone } from '../lib/runner-status';
import { ProgressBar } from './progress-bar';

/** The runner's status in exo's words, its loading progress, and why it failed. */
export function RunnerStatusRow({ instance }: { instance: LocalInstanceSnapshot }) {
  const { status, restarts, lastExit, pid } = instance.runner;
  const tone = runnerTone(status);
  return (
    <div className="runner-status">
      <div className="row">
        <span className={`dot tone-${tone}`} aria-hidden="true" />
        <span className="status-name" data-testid="runner-status">
          {status.kind}
        </span>
        {status.kind === 'RunnerLoading' && (
          <span className="muted">
            {formatCount(status.layersLoaded)}/{formatCount(status.totalLayers)} layers
          </span>
        )}
        <span className="spacer" />
        {pid !== null && <span className="muted small">pid {pid}</span>}
        {restarts > 0 && <span className="muted small">{restarts === 1 ? '1 restart' : `${restarts} restarts`}</span>}
      </div>
      {status.kind === 'RunnerLoading' && (
        <ProgressBar value={status.layersLoaded} max={status.totalLayers} label={`Loading ${instance.modelName}`} />
      )}
      {status.kind === 'RunnerFailed' && (
        <p className="failure" role="alert">
          {status.errorMessage}
          {lastExit && lastExit.reason !== status.errorMessage && <span className="muted"> ({lastExit.reason})</span>}
        </p>
      )}
      {status.kind !== 'RunnerFailed' && lastExit && restarts > 0 && (
        <p className="muted small">Last exit: {lastExit.reason}</p>
      )}
    </div>
  );
}
