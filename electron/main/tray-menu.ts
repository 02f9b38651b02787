/**
 * The tray's menu as a pure function of the snapshot and the login item: Electron's menu
 * template (plain objects), so it is tested without Electron. Clicks call the named
 * actions; main owns the state, the menu only reflects it (as in Kap).
 */
import type { MenuItemConstructorOptions } from 'electron';
import type { MenuBarTitle, Settings } from '../../shared/api';
import { menuBarTitleMenu } from './tray-title';
import type { InstanceSnapshot, LaunchProgress, Snapshot } from '../../shared/snapshot';
import { instanceStatusWords } from '../../shared/status-words';
import { exoUnreachable, isLocal } from '../../shared/instance-state';
import { runnerLogSource } from '../../shared/logs';

/** What the menu's entries do. */
export interface TrayMenuActions {
  launchSafePair(): void;
  stopAll(): void;
  exportDiagnostics(): void;
  openWindow(): void;
  /** Opens the popover's log view at this source (a model's runner log). */
  openLog(source: string): void;
  copyApiUrl(): void;
  setStartAtLogin(enabled: boolean): void;
  /** Saves the `menuBarTitle` setting; the title changes at once. */
  setMenuBarTitle(mode: MenuBarTitle): void;
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
  showModel: 'Show in exobar',
  openLog: 'Open log',
} as const;

/** The start-at-login checkbox's id (its state is refreshed in place when the menu opens). */
export const START_AT_LOGIN_ID = 'start-at-login';

/**
 * "Llama 3.2 3B (simulated) — Running": the name and the runner's status, nothing that
 * changes with every request (queue lengths and requests in flight are in the popover),
 * so streaming never rebuilds the menu. Loading shows as "Loading", without the layer count.
 */
export function instanceMenuLabel(instance: InstanceSnapshot): string {
  const status = instance.source === 'local' && instance.runner.status.kind === 'RunnerLoading' ? 'Loading' : instanceStatusWords(instance);
  return `${instance.modelName} — ${status}`;
}

/** "Launching safe pair (model 2 of 2)…": changes once per model, not once per layer. */
export function launchingLabel(launch: Pick<LaunchProgress, 'models' | 'current'>): string {
  return launch.models.length > 0 ? `Launching safe pair (model ${launch.current + 1} of ${launch.models.length})…` : 'Launching safe pair…';
}

/** Builds the menu template: models, then the actions, then the app entries. */
export function buildTrayMenu(
  snapshot: Snapshot,
  settings: Pick<Settings, 'startAtLogin'> & Partial<Pick<Settings, 'menuBarTitle'>>,
  actions: TrayMenuActions,
): MenuItemConstructorOptions[] {
  const models: MenuItemConstructorOptions[] =
    snapshot.instances.length === 0
      ? [{ id: 'no-models', label: 'No models running', enabled: false }]
      : snapshot.instances.map((instance) =>
          isLocal(instance)
            ? {
                id: `instance:${instance.id}`,
                label: instanceMenuLabel(instance),
                // Its details in the popover, or its runner's log followed live there.
                submenu: [
                  { id: `show:${instance.id}`, label: MENU_LABELS.showModel, click: () => actions.openWindow() },
                  { id: `log:${instance.id}`, label: MENU_LABELS.openLog, click: () => actions.openLog(runnerLogSource(instance.id)) },
                ],
              }
            : {
                id: `instance:${instance.id}`,
                // exo's status of a model it can no longer be asked about would be stale.
                label: exoUnreachable(snapshot) ? `${instance.modelName} — last seen, exo unreachable` : instanceMenuLabel(instance),
                // exo's runners log into exo's own log, not one of exobar's: the popover shows the instance.
                click: () => actions.openWindow(),
              },
        );

  const launching = snapshot.launch?.state === 'running';
  return [
    ...models,
    { type: 'separator' },
    {
      id: 'launch-safe-pair',
      // The step ("Loading … (12/28 layers)") changes with every layer: it is in the popover, not here.
      label: launching ? launchingLabel(snapshot.launch!) : MENU_LABELS.launchSafePair,
      enabled: !launching,
      click: () => actions.launchSafePair(),
    },
    // Stop all stops this node's runners: exo's instances are exo's to stop.
    { id: 'stop-all', label: MENU_LABELS.stopAll, enabled: snapshot.instances.some(isLocal), click: () => actions.stopAll() },
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
    menuBarTitleMenu(settings.menuBarTitle ?? 'ttft', (mode) => actions.setMenuBarTitle(mode)),
    {
      id: START_AT_LOGIN_ID,
      label: MENU_LABELS.startAtLogin,
      type: 'checkbox',
      checked: settings.startAtLogin,
      click: (item) => actions.setStartAtLogin(item.checked),
    },
    { type: 'separator' },
    { id: 'quit', label: MENU_LABELS.quit, accelerator: 'CommandOrControl+Q', click: () => actions.quit() },
  ];
}
