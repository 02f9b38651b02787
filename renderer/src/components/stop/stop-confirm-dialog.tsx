import { useEffect, useId, useRef } from 'react';
import { requestsWillEndWords } from '../../../../shared/stop-confirmation';
import { useActions, useExobar } from '../../store/store-context';

/**
 * The question before a stop that would end requests in flight ("2 requests will
 * end"): each of them fails for its client, so one click must not do it. "Keep
 * running" has the focus, and Escape answers it too.
 */
export function StopConfirmDialog() {
  const pending = useExobar((s) => s.stopConfirmation);
  const { confirmStop, dismissStopConfirmation } = useActions();
  const titleId = useId();
  const keepRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!pending) return;
    keepRef.current?.focus();
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') dismissStopConfirmation();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [pending, dismissStopConfirmation]);

  if (!pending) return null;
  const all = pending.target.kind === 'all';
  const title = pending.target.kind === 'all' ? 'Stop all models?' : `Stop ${pending.target.name}?`;
  return (
    <div className="dialog-backdrop">
      <div className="dialog" role="alertdialog" aria-modal="true" aria-labelledby={titleId} data-testid="stop-confirmation">
        <h2 id={titleId}>{title}</h2>
        <p data-testid="stop-confirmation-count">
          <strong>{requestsWillEndWords(pending.requests)}.</strong> Each client gets an error for its request.
          {all && ' Models without requests stop either way.'}
        </p>
        <div className="row toolbar">
          <span className="spacer" />
          <button type="button" className="button small" ref={keepRef} onClick={dismissStopConfirmation}>
            Keep running
          </button>
          <button type="button" className="button small danger" onClick={() => void confirmStop()}>
            {all ? 'Stop all anyway' : 'Stop anyway'}
          </button>
        </div>
      </div>
    </div>
  );
}
