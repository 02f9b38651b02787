/**
 * "Start at login" as macOS has it. The system's login item is the truth (the user
 * can change it in System Settings > General > Login Items at any time), so the
 * checkbox reads `getLoginItemSettings()` and the app writes only when the user
 * changes it, never at start-up. In development the login item would be the bare
 * Electron binary: there only the setting is kept.
 */
import type { App } from 'electron';

export interface LoginItem {
  /** Whether exobar starts at login, as last read (snapshots come ten times a second: no system call each). */
  enabled(): boolean;
  /** Asks the system again (each time the menu opens), and remembers the answer. */
  read(): boolean;
  /** Registers or removes the login item; throws, in words, when macOS did not do it. */
  set(enabled: boolean): void;
}

/** What a login item status that is not the one asked for means, in words for a notification. */
export function loginItemProblem(status: string | undefined): string {
  switch (status) {
    case 'requires-approval':
      return 'macOS needs your approval: turn exobar on in System Settings > General > Login Items.';
    case 'not-found':
      return 'macOS did not find exobar to register it: move exobar to Applications and try again.';
    default:
      return `macOS did not change the login item${status ? ` (status: ${status})` : ''}.`;
  }
}

/**
 * The login item of `app`. `saved` is settings.json's `startAtLogin`, used only where
 * no login item is registered (development).
 */
export function loginItem(app: Pick<App, 'isPackaged' | 'getLoginItemSettings' | 'setLoginItemSettings'>, saved: () => boolean): LoginItem {
  if (!app.isPackaged) return { enabled: saved, read: saved, set: () => undefined };
  let last = app.getLoginItemSettings().openAtLogin;
  return {
    enabled: () => last,
    read: () => (last = app.getLoginItemSettings().openAtLogin),
    set(enabled) {
      app.setLoginItemSettings({ openAtLogin: enabled });
      const after = app.getLoginItemSettings();
      last = after.openAtLogin;
      if (after.openAtLogin !== enabled) throw new Error(loginItemProblem((after as { status?: string }).status));
    },
  };
}
