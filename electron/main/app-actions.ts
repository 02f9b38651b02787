/**
 * What the tray menu can ask the app to do, and the few page calls only main can answer
 * (the bundle's save sheet, following a log, the latest snapshot). The page's other
 * actions are the core's routes, which main's IPC handler dispatches to in process.
 */
import { join } from 'node:path';
import { app, clipboard, dialog, type BrowserWindow, type MessageBoxOptions, type SaveDialogOptions } from 'electron';
import type { Settings } from '../../shared/api';
import type { DiagnosticsResult } from '../../shared/bridge';
import type { Snapshot } from '../../shared/snapshot';
import { diagnosticBundleFileName } from '../core/diagnostics';
import type { ExobarNode } from '../core/node/node-types';
import { stopAllInstances } from '../core/node/stop-all';
import { requestsEndingOnStop, requestsWillEndWords } from '../../shared/stop-confirmation';
import type { CoreServices } from './core-services';
import type { IpcBackend } from './ipc-handlers';
import type { LogFollowBackend } from './log-follow-backend';
import type { TrayMenuActions } from './tray-menu';
import { launchSafePairFromMenu } from './menu-launch';

export interface AppActionsOptions {
  node: ExobarNode;
  services: CoreServices;
  /** The local API's base URL (…/v1), used when the snapshot has none. */
  apiBaseUrl: string;
  updateSettings(patch: Partial<Settings>): Promise<Settings>;
  /** Registers (or removes) the app as a login item. */
  applyStartAtLogin(enabled: boolean): void;
  popover: {
    show(): void;
    pinWhile<T>(work: () => Promise<T>): Promise<T>;
    /** The window a dialog is parented to (a sheet on the popover); null brings the app to the front instead. */
    dialogParent?(): BrowserWindow | null;
  };
  notify(title: string, body: string): void;
  /** Called after a change the tray must show at once (a setting). */
  refresh(): void;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** The page's log view (log-follow-backend.ts), and the tray's way to open it at one source. */
  logs: Pick<LogFollowBackend, 'followLog' | 'unfollowLog'> & { open(source: string): void };
}

export interface AppActions {
  /** The page's Electron-only calls over IPC: errors go back to the caller. */
  backend: IpcBackend;
  /** The tray menu's entries: errors become notifications. */
  menu: TrayMenuActions;
}

export function createAppActions(options: AppActionsOptions): AppActions {
  const { node, services, popover, notify, log } = options;

  const stopAll = async () => {
    const { ids, failed } = await stopAllInstances(node);
    if (failed.length > 0) throw new Error(`${failed.length} of ${ids.length} models did not stop: ${String(failed[0]!.error)}`);
  };

  /**
   * The window a dialog opens on: a sheet on the popover; from the tray menu (no
   * popover) the app comes to the front first, or the dialog would open behind the
   * other apps' windows.
   */
  const dialogParent = (): BrowserWindow | null => {
    const parent = popover.dialogParent?.() ?? null;
    if (!parent) app.focus({ steal: true });
    return parent;
  };

  /**
   * The tray's "Stop all models": with requests in flight it asks first, in words
   * ("2 requests will end"), since each of them fails for its client.
   */
  const confirmAndStopAll = async () => {
    const snapshot = node.snapshot();
    const requests = requestsEndingOnStop(
      snapshot,
      snapshot.instances.map((i) => i.id),
    );
    if (requests > 0) {
      const question: MessageBoxOptions = {
        type: 'warning',
        message: `Stop all models? ${requestsWillEndWords(requests)}.`,
        detail: 'Each client gets an error for its request. Models without requests stop at once either way.',
        buttons: ['Stop all', 'Cancel'],
        defaultId: 1,
        cancelId: 1,
      };
      const answer = await popover.pinWhile(async () => {
        const parent = dialogParent();
        return parent ? dialog.showMessageBox(parent, question) : dialog.showMessageBox(question);
      });
      if (answer.response !== 0) return;
    }
    await stopAll();
  };

  const exportDiagnostics = (): Promise<DiagnosticsResult> =>
    popover.pinWhile(async () => {
      const saveOptions: SaveDialogOptions = {
        title: 'Export diagnostic bundle',
        defaultPath: join(app.getPath('downloads'), diagnosticBundleFileName()),
        filters: [{ name: 'Zip archive', extensions: ['zip'] }],
        properties: ['createDirectory', 'showOverwriteConfirmation'],
      };
      const parent = dialogParent();
      const choice = await (parent ? dialog.showSaveDialog(parent, saveOptions) : dialog.showSaveDialog(saveOptions));
      if (choice.canceled || !choice.filePath) return { saved: false, location: null };
      await services.writeDiagnosticBundle(choice.filePath);
      log.info({ file: choice.filePath }, 'diagnostic bundle written');
      return { saved: true, location: choice.filePath };
    });

  /** Menu entries have no caller to answer: failures become a notification. */
  const fromMenu = (what: string, work: () => Promise<unknown>) => () => {
    work().catch((error: unknown) => {
      log.warn({ err: error }, `${what} failed`);
      notify(`${what} failed`, error instanceof Error ? error.message : String(error));
    });
  };

  // Only what needs Electron: every other page action is its route (ipc-handlers.ts dispatches it).
  const backend: IpcBackend = {
    getSnapshot: (): Snapshot => node.snapshot(),
    exportDiagnostics,
    followLog: (source, lines) => options.logs.followLog(source, lines),
    unfollowLog: (streamId) => options.logs.unfollowLog(streamId),
  };

  const menu: TrayMenuActions = {
    // A gate the operator may pass (memory, exo's fast synch) is asked about first, as the popover does.
    launchSafePair: fromMenu('Launch safe pair', () =>
      launchSafePairFromMenu({
        plan: () => services.planSafePair(),
        launch: (launchOptions) => services.launchSafePair(launchOptions),
        ask: (question) =>
          popover.pinWhile(async () => {
            const parent = dialogParent();
            return (await (parent ? dialog.showMessageBox(parent, question) : dialog.showMessageBox(question))).response;
          }),
      }),
    ),
    stopAll: fromMenu('Stop all models', confirmAndStopAll),
    exportDiagnostics: fromMenu('Export diagnostic bundle', async () => {
      const result = await exportDiagnostics();
      if (result.saved) notify('Diagnostic bundle saved', result.location ?? '');
    }),
    openWindow: () => popover.show(),
    openLog: (source) => {
      popover.show();
      options.logs.open(source);
    },
    copyApiUrl: () => clipboard.writeText(node.snapshot().apiBaseUrl ?? options.apiBaseUrl),
    setStartAtLogin: (enabled) =>
      fromMenu('Start at login', async () => {
        await options.updateSettings({ startAtLogin: enabled });
        options.applyStartAtLogin(enabled);
        options.refresh();
      })(),
    setMenuBarTitle: (mode) =>
      fromMenu('Menu bar title', async () => {
        await options.updateSettings({ menuBarTitle: mode });
        options.refresh();
      })(),
    quit: () => app.quit(),
  };

  return { backend, menu };
}
