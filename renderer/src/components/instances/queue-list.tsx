import type { RequestSnapshot } from '../../../../shared/snapshot';
import { formatCount, shortId } from '../../lib/format';
import { queueExplanation } from '../../lib/jargon';
import { PHASE_LABEL } from '../../lib/runner-status';
import { useActions, useExobar } from '../../store/store-context';
import { LiveAge } from '../common/live-age';

/** A request's phase in words; an exo card says "held by exobar" for a request in exobar's own queue. */
export type PhaseLabelOf = (request: RequestSnapshot) => string;

const defaultLabel: PhaseLabelOf = (request) => PHASE_LABEL[request.phase];

function QueueRow({ request, labelOf }: { request: RequestSnapshot; labelOf: PhaseLabelOf }) {
  const { cancelRequest } = useActions();
  const busy = useExobar((s) => s.busy[`cancel:${request.id}`] === true);
  const cancelling = request.phase === 'cancelling';
  return (
    <li className="queue-row" data-testid="queue-row" data-phase={request.phase}>
      <span className={`phase phase-${request.phase}`}>{labelOf(request)}</span>
      <span className="muted small request-id" title={request.id}>
        {shortId(request.id)}
      </span>
      <span className="spacer" />
      <span className="muted small tabular">
        {request.phase === 'decoding' ? `${formatCount(request.completionTokens)} tok` : `${formatCount(request.promptTokens)} prompt`}
      </span>
      <LiveAge ageMs={request.ageMs} />
      <button
        type="button"
        className="icon-button"
        aria-label={`Cancel request ${request.id}`}
        title={cancelling ? 'Cancellation asked for' : 'Cancel this request'}
        disabled={busy || cancelling}
        onClick={() => void cancelRequest(request.id)}
      >
        ✕
      </button>
    </li>
  );
}

/** Every request of one model with its phase and age, oldest first as the node queues them. */
export function QueueList({
  requests,
  capacity,
  label = 'Queue',
  labelOf = defaultLabel,
}: {
  requests: RequestSnapshot[];
  capacity: number | null;
  label?: string;
  labelOf?: PhaseLabelOf;
}) {
  const explanation = queueExplanation(capacity);
  return (
    <div className="queue">
      <div className="row">
        <span className="label explained" title={explanation}>
          {label}
        </span>
        <span className="spacer" />
        <span className="muted small tabular" data-testid="queue-count" title={explanation}>
          {capacity === null ? requests.length : `${requests.length} / ${capacity}`}
        </span>
      </div>
      {requests.length === 0 ? (
        <p className="muted small">No requests</p>
      ) : (
        <ul className="queue-list" aria-label="Requests">
          {requests.map((request) => (
            <QueueRow key={request.id} request={request} labelOf={labelOf} />
          ))}
        </ul>
      )}
    </div>
  );
}
