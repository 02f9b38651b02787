import type { LocalInstanceSnapshot } from '../../../shared/snapshot';
import { plainRunnerStatus } from '../../../shared/runner-status-words';
import { runnerTone } from '../lib/runner-status';
import { ProgressBar } from './progress-bar';

/** The runner's status in plain words (exo's name in the tooltip), its loading progress, and why it failed. */
export function RunnerStatusRow({ instance }: { instance: LocalInstanceSnapshot }) {
  const { status, restarts, lastExit, pid } = instance.runner;
  const tone = runnerTone(status);
  return (
    <div className="runner-status">
      <div className="row">
        <span className={`dot tone-${tone}`} aria-hidden="true" />
        <span className="status-name ellipsis" data-testid="runner-status" data-kind={status.kind} title={`exo status: ${status.kind}`}>
          {plainRunnerStatus(status)}
        </span>
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
