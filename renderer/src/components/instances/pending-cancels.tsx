import type { PendingCancelSnapshot } from '../../../../shared/snapshot';
import { shortId } from '../../lib/format';
import { LiveAge } from '../common/live-age';

const STATE_TEXT: Record<PendingCancelSnapshot['state'], string> = {
  // exo's engine drops a cancel for a task it has not admitted yet, so the supervisor
  // holds it until the runner has taken the request.
  held: 'sent once the runner takes the request',
  sent: 'sent, waiting for the runner to stop',
};

/** Cancellations asked for and not yet confirmed by the runner. */
export function PendingCancels({ cancels }: { cancels: PendingCancelSnapshot[] }) {
  if (cancels.length === 0) return null;
  return (
    <div className="pending-cancels">
      <div className="row">
        <span className="label">Pending cancellations</span>
      </div>
      <ul aria-label="Pending cancellations">
        {cancels.map((cancel) => (
          <li key={cancel.requestId} className="row" data-testid="pending-cancel" data-state={cancel.state}>
            <span className={`badge ${cancel.state === 'held' ? 'warn' : 'info'}`}>{cancel.state}</span>
            <span className="muted small" title={cancel.requestId}>
              {shortId(cancel.requestId)}
            </span>
            <span className="muted small">{STATE_TEXT[cancel.state]}</span>
            <span className="spacer" />
            <LiveAge ageMs={cancel.ageMs} />
          </li>
        ))}
      </ul>
    </div>
  );
}
