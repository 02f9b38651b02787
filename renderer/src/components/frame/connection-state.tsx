import { CONNECTION_WORDS, pageConnection } from '../../lib/connection-view';
import { useExobar } from '../../store/store-context';

/** Before the first snapshot: a quiet "connecting" line instead of an empty page. */
export function LoadingState() {
  return (
    <div className="state-panel" role="status" data-testid="loading-state">
      <div className="spinner" aria-hidden="true" />
      <p>Connecting to exobar…</p>
    </div>
  );
}

/**
 * A lost connection or a refused token, in words, with what to do next. "Token
 * refused" and "cannot reach" are told apart: the first is fixed by opening the right
 * address, the second by starting the server.
 */
export function ConnectionError() {
  const error = useExobar((s) => s.connectionError);
  const problem = useExobar((s) => s.connectionProblem);
  const received = useExobar((s) => s.received);
  if (!error) return null;
  const state = pageConnection('error', problem, received);
  const title = CONNECTION_WORDS[state].message ?? '';
  return (
    <section className="banner error" role="alert" data-testid="connection-error" data-problem={problem ?? 'unreachable'} data-connection={state}>
      <h2>{title}</h2>
      <p className="selectable">{error}</p>
    </section>
  );
}

/** Nothing running: the next step is the safe launch right below. */
export function EmptyState() {
  return (
    <div className="state-panel" data-testid="empty-state">
      <p className="empty-title">No models running — launch the safe pair</p>
      <p className="muted small">Two models on one GPU, each with the fast-synch setting that keeps the GPU from wedging.</p>
    </div>
  );
}
