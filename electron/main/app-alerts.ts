/**
 * Alerts macOS did not show as notifications: a banner in the popover and a badge on
 * the tray title, kept in step as alerts come, the popover opens or its page loads.
 */
import { ALERTS_CHANNEL } from '../../shared/ipc-channels';
import type { AlertNotifier } from './alert-notifier';
import type { PopoverWindow } from './popover-window';
import type { TrayController } from './tray-controller';

export interface AppAlertsInput {
  notifier: AlertNotifier;
  popover: PopoverWindow;
  tray: TrayController;
}

export function showUndeliveredAlerts({ notifier, popover, tray }: AppAlertsInput): void {
  const showAlerts = () => {
    // An alert that arrives while the popover is open is seen in its banner: no badge.
    if (popover.isVisible()) notifier.markSeen();
    popover.send(ALERTS_CHANNEL, notifier.alerts());
    tray.setBadge(notifier.unseen());
  };
  notifier.onChange(showAlerts);
  popover.window.on('show', () => notifier.markSeen());
  popover.window.webContents.on('did-finish-load', showAlerts);
  showAlerts();
}
