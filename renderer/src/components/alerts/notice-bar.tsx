import { useEffect } from 'react';
import { useActions, useExobar } from '../../store/store-context';

/** The outcome of the last action: an error stays until dismissed, a confirmation fades after a few seconds. */
export function NoticeBar() {
  const notice = useExobar((s) => s.notice);
  const { dismissNotice } = useActions();
  useEffect(() => {
    if (notice?.kind !== 'info') return;
    const timer = setTimeout(dismissNotice, 4000);
    return () => clearTimeout(timer);
  }, [notice, dismissNotice]);
  if (!notice) return null;
  return (
    <div className={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'} data-testid="notice">
      <span>{notice.message}</span>
      <button type="button" className="icon-button" aria-label="Dismiss" onClick={dismissNotice}>
        ✕
      </button>
    </div>
  );
}
