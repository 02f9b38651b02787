/**
 * Shows operator alerts (operator-alerts.ts) as macOS notifications. Each alert key
 * is shown once; a click opens the popover where the details are.
 */
import { Notification } from 'electron';
import type { Snapshot } from '../../shared/snapshot';
import { operatorAlerts, type OperatorAlert } from './operator-alerts';

const REMEMBERED_KEYS = 200;

export class AlertNotifier {
  private previous: Snapshot | null = null;
  private readonly shownKeys: string[] = [];

  constructor(private readonly onClick: () => void) {}

  /** False where the system shows no notifications (then callers fall back to a dialog). */
  static supported(): boolean {
    return Notification.isSupported();
  }

  /** Diffs against the previous snapshot and notifies what is new; returns what was shown. */
  observe(snapshot: Snapshot): OperatorAlert[] {
    const alerts = operatorAlerts(this.previous, snapshot).filter((a) => !this.shownKeys.includes(a.key));
    this.previous = snapshot;
    for (const alert of alerts) {
      this.shownKeys.push(alert.key);
      this.notify(alert.title, alert.body);
    }
    this.shownKeys.splice(0, Math.max(0, this.shownKeys.length - REMEMBERED_KEYS));
    return alerts;
  }

  /** A one-off message (settings reset, bundle saved, an action that failed). */
  notify(title: string, body: string): void {
    if (!Notification.isSupported()) return;
    const notification = new Notification({ title, body });
    notification.on('click', () => this.onClick());
    notification.show();
  }
}
