/**
 * The app's life: one instance, no dock icon, the core started in the main process
 * (the same startCore as `exobar serve`, API on 127.0.0.1), the tray, the popover,
 * the IPC handlers, notifications, and a quit that stops every runner first.
 */
import { join } from 'node:path';
import { app, ipcMain, Menu, protocol, session, shell } from 'electron';
import pino, { type Logger } from 'pino';
import { ownLogPath, withOwnLog } from '../core/logs/own-log';
import { IpcChannel, LOG_LINES_CHANNEL, OPEN_LOG_CHANNEL } from '../../shared/ipc-channels';
import type { Snapshot } from '../../shared/snapshot';
import { SettingsStore } from '../core/settings/settings-store';
import type { RunningCore, StartCoreOptions } from '../core/start-core';
import { showUndeliveredAlerts } from './app-alerts';
import { startAppCore } from './start-app-core';
import { AlertNotifier } from './alert-notifier';
import { applicationMenuTemplate } from './app-menu';
import { createAppActions, type AppActions } from './app-actions';
import { appPaths, runnerEnvironment, type AppLocation } from './app-paths';
import { handleAppProtocol, registerAppScheme } from './app-protocol';
import { killRunnerGroups } from '../core/supervisor/kill-runner-groups';
import { installCleanQuit, STOP_DEADLINE_MS, type QuitState } from './clean-quit';
import { createCoreServices, type CoreServices } from './core-services';
import { registerIpcHandlers } from './ipc-handlers';
import { createLogFollowBackend } from './log-follow-backend';
import { loginItem } from './login-item';
import { PopoverWindow } from './popover-window';
import { APP_ORIGIN, APP_START_URL, hardenSession, hardenWebContents } from './security';
import { TrayController } from './tray-controller';

export { API_HOST } from './start-app-core';

export interface ExobarAppOptions {
  /** Directory of the built main bundle (out/main). */
  mainDir: string;
  /** Replaceable for tests. */
  startCore?: (options: StartCoreOptions) => Promise<RunningCore>;
  createServices?: typeof createCoreServices;
  simTimeScale?: number;
  /** Deadline for a clean stop on quit. */
  stopDeadlineMs?: number;
  logger?: Logger;
  /** Quit on SIGINT/SIGTERM (a terminal's Ctrl-C in development); default true. */
  handleSignals?: boolean;
}

export interface ExobarApp {
  core: RunningCore;
  settings: SettingsStore;
  tray: TrayController;
  popover: PopoverWindow;
  actions: AppActions;
  notifier: AlertNotifier;
  quitState(): QuitState;
}

function defaultLogger(packaged: boolean, ownLog: string): Logger {
  // A packaged app has no terminal: its log goes to a file in the user data folder.
  const destination = packaged ? pino.destination({ dest: join(app.getPath('logs'), 'main.log'), mkdir: true, sync: false }) : pino.destination(2);
  const level = process.env.EXOBAR_LOG_LEVEL ?? 'info';
  // And into exobar's own log, which the page's log view follows (the source "exobar").
  return pino({ name: 'exobar-app', level }, withOwnLog(destination, level, ownLog));
}

/**
 * Starts the app. Resolves with its parts once the tray is up, or null when another
 * instance already runs (this one then quits and the other shows its popover).
 */
export async function startExobarApp(options: ExobarAppOptions): Promise<ExobarApp | null> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  // Before "ready": app:// must be a standard, secure scheme for the page to get an origin.
  registerAppScheme(protocol);
  // A menu-bar app keeps running with its window hidden or closed.
  app.on('window-all-closed', () => undefined);

  await app.whenReady();
  const ownLog = ownLogPath(app.getPath('userData'));
  const log = options.logger ?? defaultLogger(app.isPackaged, ownLog);
  // No dock icon (LSUIElement does the same for the packaged app, from its first frame).
  app.dock?.hide();
  // Not Electron's default menu, whose Close Window (Cmd+W) would destroy the popover.
  Menu.setApplicationMenu(Menu.buildFromTemplate(applicationMenuTemplate()));

  const location: AppLocation = {
    mainDir: options.mainDir,
    appPath: app.getAppPath(),
    resourcesPath: process.resourcesPath ?? app.getAppPath(),
    isPackaged: app.isPackaged,
  };
  const paths = appPaths(location);
  Object.assign(process.env, runnerEnvironment(paths));

  hardenSession(session.defaultSession, (url) => log.warn({ url }, 'blocked a request for content outside the app'));
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, shell));
  handleAppProtocol(protocol, paths.rendererDir);

  let popover: PopoverWindow | null = null;
  const notifier = new AlertNotifier(() => popover?.show());
  const { settings, core } = await startAppCore({ options, log, ownLog, rendererDir: paths.rendererDir, notifier });

  const quit = installCleanQuit({
    app,
    // core.stop() also stops the exo exobar started (never one it only attached to).
    stop: () => core.stop(),
    forceKill: () => {
      killRunnerGroups(core.node.runnerPids());
      core.exoProcess.killNow();
    },
    deadlineMs: () => options.stopDeadlineMs ?? Math.max(STOP_DEADLINE_MS, core.exoProcess.ownsProcess ? core.exoProcess.stopBudgetMs : 0),
    log,
  });
  if (options.handleSignals ?? true) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.quit());

  // The system's login item is the truth; nothing is written at start-up (that would undo
  // a change the user made in System Settings).
  const login = loginItem(app, () => settings.get().startAtLogin);

  let tray: TrayController | null = null;
  let lastSnapshot: Snapshot | null = null;
  const services: CoreServices = (options.createServices ?? createCoreServices)({
    node: core.node,
    dataDir: core.dataDir,
    version: app.getVersion(),
    settings: () => settings.get(),
    mlx: core.mlx,
    showLaunch: core.showLaunch,
    exo: () => core.exo.bundleSource(),
    exoProcess: core.exoProcess,
    exoCluster: core.exo,
    log,
  });
  // The popover's log view: the API's sources and reading, its lines pushed to the window.
  const logs = createLogFollowBackend({
    dataDir: core.dataDir,
    ownLog,
    snapshot: () => core.node.snapshot(),
    exoOwnLog: () => core.exo.localLogFile(),
    push: (payload) => popover?.send(LOG_LINES_CHANNEL, payload),
  });
  const actions = createAppActions({
    node: core.node,
    services,
    apiBaseUrl: `${core.url}/v1`,
    updateSettings: (patch) => settings.update(patch),
    applyStartAtLogin: (enabled) => login.set(enabled),
    popover: {
      show: () => popover?.show(),
      pinWhile: (work) => (popover ? popover.pinWhile(work) : work()),
      dialogParent: () => popover?.dialogParent() ?? null,
    },
    notify: (title, body) => notifier.notify(title, body),
    refresh: () => lastSnapshot && tray?.update(lastSnapshot, { startAtLogin: login.enabled(), menuBarTitle: settings.get().menuBarTitle }),
    log,
    logs: { ...logs, open: (source) => popover?.send(OPEN_LOG_CHANNEL, source) },
  });

  tray = new TrayController(paths.trayImagesDir, actions.menu, {
    startAtLogin: () => login.read(),
    // A click on the icon opens the menu: the popover gives way.
    onOpen: () => popover?.hide(),
    warn: (message) => log.warn({}, message),
  });
  popover = new PopoverWindow({
    preload: paths.preload,
    url: APP_START_URL,
    anchor: () => tray.bounds(),
    devTools: !app.isPackaged,
    quitting: () => quit.state() !== 'running',
  });
  // Launching exobar again: a second process on other platforms, `activate` when macOS
  // reopens the running app from Finder, Spotlight or Launchpad (the only way in when the
  // icon is hidden behind the notch).
  app.on('second-instance', () => popover?.show());
  app.on('activate', () => popover?.show());

  showUndeliveredAlerts({ notifier, popover, tray });
  // A reloaded page has no streams any more: stop reading their files.
  popover.window.webContents.on('did-start-navigation', () => logs.stopAll());
  app.on('will-quit', () => logs.stopAll());

  registerIpcHandlers({
    ipcMain,
    backend: actions.backend,
    // Every other page action: the core's own route, in process.
    dispatch: (request) => core.server.dispatch(request),
    policy: { trustedWebContents: () => popover?.webContents ?? null, origin: APP_ORIGIN },
    onRefused: (channel, reason) => {
      core.node.countRejectedInput('ipc');
      log.warn({ channel, reason }, 'refused an IPC message');
    },
    onError: (channel, error) => log.warn({ channel, err: error }, 'IPC call failed'),
  });

  const show = (snapshot: Snapshot) => {
    lastSnapshot = snapshot;
    tray?.update(snapshot, { startAtLogin: login.enabled(), menuBarTitle: settings.get().menuBarTitle });
    popover?.send(IpcChannel.snapshot, snapshot);
    notifier.observe(snapshot);
  };
  show(core.node.snapshot());
  const unsubscribe = core.node.onSnapshot(show);
  app.on('will-quit', () => unsubscribe());

  return { core, settings, tray, popover, actions, notifier, quitState: quit.state };
}
