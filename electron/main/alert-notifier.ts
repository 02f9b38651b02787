/**
 * Shows operator alerts (operator-alerts.ts) and one-off messages as macOS
 * notifications, and never loses one: since Electron 42 notifications go through
 * UNUserNotificationCenter, which refuses unsigned and ad-hoc signed apps (and apps
 * the user has not allowed) with a `failed` event while `Notification.isSupported()`
 * stays true. An alert that is not shown is kept as undelivered: the popover shows it
 * as a banner and the tray title carries a badge until the popover has been opened.
 */
import { Notification } from 'electron';
import type { AppAlert } from '../../shared/bridge';
import type { Snapshot } from '../../shared/snapshot';
import { operatorAlerts, type OperatorAlert } from './operator-alerts';

const REMEMBERED_KEYS = 200;
/** Undelivered alerts kept for the banner (the oldest go first). */
const KEPT_ALERTS = 20;

export class AlertNotifier {
  private previous: Snapshot | null = null;
  private readonly shownKeys: string[] = [];
  private readonly undelivered: AppAlert[] = [];
  private unseenCount = 0;
  private nextId = 1;
  /** Notifications on screen: Electron drops a notification's events once it is garbage collected. */
  private readonly live = new Set<Notification>();
  private readonly listeners = new Set<() => void>();

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

  /** A one-off message (port in use, settings reset, bundle saved, an action that failed). */
  notify(title: string, body: string): void {
    if (!Notification.isSupported()) {
      this.keep(title, body);
      return;
    }
    const notification = new Notification({ title, body });
    this.live.add(notification);
    notification.on('click', () => {
      this.live.delete(notification);
      this.onClick();
    });
    notification.on('close', () => this.live.delete(notification));
    notification.on('failed', () => {
      this.live.delete(notification);
      this.keep(title, body);
    });
    notification.show();
  }

  /** The alerts macOS did not show, oldest first. */
  alerts(): AppAlert[] {
    return [...this.undelivered];
  }

  /** How many of them arrived since the popover was last opened (the tray's badge). */
  unseen(): number {
    return this.unseenCount;
  }

  /** The popover was opened: its banner shows them. */
  markSeen(): void {
    if (this.unseenCount === 0) return;
    this.unseenCount = 0;
    this.changed();
  }

  /** Calls `listener` whenever the undelivered alerts or the unseen count change. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private keep(title: string, body: string): void {
    this.undelivered.push({ id: this.nextId++, title, body, at: Date.now() });
    this.undelivered.splice(0, Math.max(0, this.undelivered.length - KEPT_ALERTS));
    this.unseenCount += 1;
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
