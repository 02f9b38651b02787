/**
 * The tray's menu as a pure function of the snapshot and settings: Electron's menu
 * template (plain objects), so it is tested without Electron. Clicks call the named
 * actions; main owns the state, the menu only reflects it (as in Kap).
 */
import type { MenuItemConstructorOptions } from 'electron';
import type { Settings } from '../../shared/api';
import type { InstanceSnapshot, Snapshot } from '../../shared/snapshot';
import { inFlightCount, instanceStatusWords, queuedCount } from './status-words';

/** What the menu's entries do. */
export interface TrayMenuActions {
  launchSafePair(): void;
  stopAll(): void;
  exportDiagnostics(): void;
  openWindow(): void;
  copyApiUrl(): void;
  setStartAtLogin(enabled: boolean): void;
  quit(): void;
}

export const MENU_LABELS = {
  launchSafePair: 'Launch safe pair',
  stopAll: 'Stop all models',
  exportDiagnostics: 'Export diagnostic bundle...',
  open: 'Open exobar',
  copyApiUrl: 'Copy API URL',
  startAtLogin: 'Start at login',
  quit: 'Quit exobar',
} as const;

/** "Llama 3.2 3B (simulated) — Running · queue 1 · 2 in flight" */
export function instanceMenuLabel(instance: InstanceSnapshot): string {
  const inFlight = inFlightCount(instance);
  const parts = [instanceStatusWords(instance), `queue ${queuedCount(instance)}`];
  if (inFlight > 0) parts.push(`${inFlight} in flight`);
  return `${instance.modelName} — ${parts.join(' · ')}`;
}

/** Builds the menu template: models, then the actions, then the app entries. */
export function buildTrayMenu(snapshot: Snapshot, settings: Pick<Settings, 'startAtLogin'>, actions: TrayMenuActions): MenuItemConstructorOptions[] {
  const models: MenuItemConstructorOptions[] =
    snapshot.instances.length === 0
      ? [{ id: 'no-models', label: 'No models running', enabled: false }]
      : snapshot.instances.map((instance) => ({
          id: `instance:${instance.id}`,
          label: instanceMenuLabel(instance),
          // The popover shows the details (queue, prefill, TTFT) of the model clicked.
          click: () => actions.openWindow(),
        }));

  const launching = snapshot.launch?.state === 'running';
  return [
    ...models,
    { type: 'separator' },
    {
      id: 'launch-safe-pair',
      label: launching ? `Launching safe pair: ${snapshot.launch?.step ?? ''}` : MENU_LABELS.launchSafePair,
      enabled: !launching,
      click: () => actions.launchSafePair(),
    },
    { id: 'stop-all', label: MENU_LABELS.stopAll, enabled: snapshot.instances.length > 0, click: () => actions.stopAll() },
    { type: 'separator' },
    { id: 'export-diagnostics', label: MENU_LABELS.exportDiagnostics, click: () => actions.exportDiagnostics() },
    { id: 'open', label: MENU_LABELS.open, click: () => actions.openWindow() },
    {
      id: 'copy-api-url',
      label: MENU_LABELS.copyApiUrl,
      enabled: snapshot.apiBaseUrl !== null,
      toolTip: snapshot.apiBaseUrl ?? 'The API is not running',
      click: () => actions.copyApiUrl(),
    },
    { type: 'separator' },
    {
      id: 'start-at-login',
      label: MENU_LABELS.startAtLogin,
      type: 'checkbox',
      checked: settings.startAtLogin,
      click: (item) => actions.setStartAtLogin(item.checked),
    },
    { type: 'separator' },
    { id: 'quit', label: MENU_LABELS.quit, accelerator: 'CommandOrControl+Q', click: () => actions.quit() },
  ];
}
