import { useActions, useExobar } from '../../store/store-context';

/**
 * Alerts the Mac app could not show as notifications (macOS refuses them to unsigned
 * apps and to apps the user has not allowed): a runner that failed, a port in use.
 * Each stays until dismissed.
 */
export function AppAlerts() {
  const alerts = useExobar((s) => s.alerts);
  const { dismissAlert } = useActions();
  if (alerts.length === 0) return null;
  return (
    <>
      {alerts.map((alert) => (
        <div key={alert.id} className="notice error" role="alert" data-testid="app-alert">
          <span>
            <strong>{alert.title}</strong> {alert.body}
          </span>
          <button type="button" className="icon-button" aria-label={`Dismiss ${alert.title}`} onClick={() => dismissAlert(alert.id)}>
            ✕
          </button>
        </div>
      ))}
    </>
  );
}
