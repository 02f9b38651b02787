/**
 * What the renderer (over IPC) and the tray menu can ask the app to do, in one place,
 * so both do exactly the same thing. Main owns the state; these are named calls on it.
 */
import type { CheckManager } from '../core/checks/check-manager';
import type { History } from '../core/history/history';
import type { RequestLog } from '../core/request-log/request-log';
import { RequestQuerySchema } from '../../shared/request-record';
import { SharingCheckRequestSchema } from '../../shared/sharing-check';
import { join } from 'node:path';
import { app, clipboard, dialog, type BrowserWindow, type MessageBoxOptions, type SaveDialogOptions } from 'electron';
import type { Settings } from '../../shared/api';
import type { DiagnosticsResult } from '../../shared/bridge';
import type { Snapshot } from '../../shared/snapshot';
import { diagnosticBundleFileName } from '../core/diagnostics';
import type { ExoAttachment } from '../core/exo/exo-attachment';
import { dismissLostModel, placeLostModelAgain } from '../core/exo/cluster-events/lost-model-actions';
import { launchInstance } from '../core/instance-launch';
import { checkModelFits, machineReadOnce } from '../core/fit/model-fits';
import { ttlFromSetting } from '../core/on-demand/on-demand-settings';
import { NodeError, type ExobarNode } from '../core/node/node-types';
import { localInstances } from '../../shared/instance-state';
import type { StopOptions } from '../../shared/bridge-actions';
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
  /** Attach mode: probe, attach (tested first, saved), detach, Stop on an exo instance, and the answers to a lost model. */
  exo: Pick<ExoAttachment, 'probe' | 'attach' | 'detach' | 'stopInstance' | 'lostModels' | 'fastSynchOf'>;
  /** The local API's base URL (…/v1), used when the snapshot has none. */
  apiBaseUrl: string;
  settings(): Settings;
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
  /** The request log and the history (the core's), for the page's Requests view and history charts. */
  records: { requestLog: Pick<RequestLog, 'query'>; history: Pick<History, 'query'> };
  /** The core's checks on demand ("Check GPU sharing"). */
  checks: Pick<CheckManager, 'start' | 'get' | 'cancel' | 'list' | 'running'>;
  /** The page's log view (log-follow-backend.ts), and the tray's way to open it at one source. */
  logs: Pick<LogFollowBackend, 'listLogSources' | 'followLog' | 'unfollowLog'> & { open(source: string): void };
}

export interface AppActions {
  /** What the renderer may call over IPC: errors go back to the caller. */
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
   * The page's stops, refused as the HTTP API refuses them (409 `requests_in_flight`)
   * while requests would end and the page has not confirmed: the page asks first, and
   * a request that arrived since its last snapshot is asked about too.
   */
  const refuseUnconfirmedStop = (ids: readonly string[], options: StopOptions | undefined): void => {
    if (options?.confirm) return;
    const requests = requestsEndingOnStop(node.snapshot(), ids);
    if (requests === 0) return;
    throw new NodeError('requests_in_flight', `${requestsWillEndWords(requests)} if ${ids.length === 1 ? 'this model stops' : 'these models stop'}`, 409);
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

  const backend: IpcBackend = {
    getSnapshot: (): Snapshot => node.snapshot(),
    getSafePairPlan: () => services.planSafePair(),
    launchSafePair: (launchOptions) => services.launchSafePair(launchOptions),
    createInstance: async (request) => {
      const { instance, reused } = await launchInstance(node, request);
      return { id: instance.id, reused };
    },
    updateInstance: (id, request) => node.updateInstance(id, request),
    // An exo instance's Stop deletes it on exo; any other id is this node's.
    stopInstance: async (id, stopOptions) => {
      refuseUnconfirmedStop([id], stopOptions);
      if (!(await options.exo.stopInstance(id))) await node.deleteInstance(id);
    },
    retryInstance: async (id) => node.retryInstance(id),
    unloadInstance: (id) => node.unloadInstance(id, 'operator'),
    setResidency: async (id, request) =>
      node.setResidency(id, {
        ...(request.pin !== undefined ? { pin: request.pin } : {}),
        ...(request.ttlSeconds !== undefined ? { ttlSeconds: ttlFromSetting(request.ttlSeconds) } : {}),
      }),
    stopAll: async (stopOptions) => {
      refuseUnconfirmedStop(
        localInstances(node.snapshot()).map((i) => i.id),
        stopOptions,
      );
      await stopAll();
    },
    async cancelRequest(requestId) {
      if (!node.cancel(requestId)) {
        throw Object.assign(new Error(`No request ${requestId} is in flight (it may have finished already)`), { code: 'request_not_found' });
      }
    },
    exportDiagnostics,
    setupMlxRuntime: async () => services.startMlxSetup(),
    refreshMlxRuntime: () => services.refreshMlxRuntime(),
    listModels: async () => node.models(),
    checkModelFits: () => checkModelFits(node, machineReadOnce(options.settings().fit.headroomBytes)),
    probeExo: (url) => options.exo.probe(url),
    async attachExo(url) {
      await options.exo.attach(url);
    },
    detachExo: () => options.exo.detach(),
    placeLostModelAgain: (model, placeOptions) => placeLostModelAgain(options.exo, model, placeOptions?.acknowledgeRisk === true),
    dismissLostModel: (model) => dismissLostModel(options.exo, model),
    listRequests: async (filter) => options.records.requestLog.query(RequestQuerySchema.parse({ ...filter, limit: filter?.limit })),
    getHistory: async (range) => options.records.history.query(range),
    startSharingCheck: async (request) => options.checks.start(SharingCheckRequestSchema.parse(request)),
    async getCheck(id) {
      const status = options.checks.get(id);
      if (!status) throw Object.assign(new Error(`No check "${id}"`), { code: 'check_not_found' });
      return status;
    },
    async cancelCheck(id) {
      await options.checks.cancel(id);
    },
    listChecks: async () => ({ checks: options.checks.list(), running: options.checks.running() }),
    controlExoProcess: (request) => services.controlExoProcess(request),
    listLogSources: () => options.logs.listLogSources(),
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
