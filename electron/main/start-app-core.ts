/**
 * The app's core, started in the main process: the settings from the user data folder
 * (a corrupt file is kept aside and replaced by defaults, and the operator told), then
 * the same startCore as `exobar serve` on 127.0.0.1 with the app's extras (the
 * diagnostic routes, settings saved on attach). A port another program holds is not
 * fatal: the core runs on a free one and the operator is told; any other failure is
 * shown in a dialog and the app exits.
 */
import { app, dialog } from 'electron';
import type { Logger } from 'pino';
import type { Settings } from '../../shared/api';
import { diagnosticsRoutes } from '../core/diagnostics/diagnostics-routes';
import { SettingsStore } from '../core/settings/settings-store';
import { startCore as realStartCore, type RunningCore, type StartCoreOptions } from '../core/start-core';
import { AlertNotifier } from './alert-notifier';

/** The API binds loopback only: the control API must never be reachable from the network. */
export const API_HOST = '127.0.0.1';

function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE' || /EADDRINUSE|address already in use/i.test(String((error as Error)?.message));
}

export interface AppCoreInput {
  /** The app's options: a replaced startCore (tests), the simulated time scale. */
  options: { startCore?: (options: StartCoreOptions) => Promise<RunningCore>; simTimeScale?: number };
  log: Logger;
  /** exobar's own log, which the page's log view follows. */
  ownLog: string;
  rendererDir: string;
  notifier: AlertNotifier;
}

/** Opens the settings and starts the core; the app has exited when this rejects. */
export async function startAppCore({ options, log, ownLog, rendererDir, notifier }: AppCoreInput): Promise<{ settings: SettingsStore; core: RunningCore }> {
  // Settings live in the user data folder; a corrupt file is kept aside and replaced by defaults.
  const userData = app.getPath('userData');
  const settings = await SettingsStore.open(userData, log.child({ component: 'settings' }));
  if (settings.warning) {
    if (AlertNotifier.supported()) notifier.notify('exobar settings were reset', settings.warning);
    else void dialog.showMessageBox({ type: 'warning', message: 'exobar settings were reset', detail: settings.warning });
  }
  const current: Settings = settings.get();
  const dataDir = current.dataDir ?? userData;

  const startCore = options.startCore ?? realStartCore;
  const coreOptions: StartCoreOptions = {
    dataDir,
    host: API_HOST,
    port: current.apiPort,
    simTimeScale: options.simTimeScale,
    settings: current,
    getSettings: () => settings.get(),
    rendererDir,
    // The same control endpoints as `exobar serve` (the safe launch is built in).
    extraRoutes: (running) =>
      diagnosticsRoutes({ dataDir: running.dataDir, getSettings: () => settings.get(), exo: running.exoBundle, exoProcess: running.exoProcess }),
    // Attaching to exo saves exo.url in the app's settings.
    updateSettings: (patch) => settings.update(patch),
    logger: log.child({ component: 'core' }),
    // Only the default logger writes it; a logger given (tests) leaves the source unlisted unless a file is there.
    ownLog,
  };
  let core: RunningCore;
  try {
    try {
      core = await startCore(coreOptions);
    } catch (error) {
      if (!isAddressInUse(error) || current.apiPort === 0) throw error;
      // Another program has the port: run anyway on a free one, and say so.
      core = await startCore({ ...coreOptions, port: 0 });
      notifier.notify(
        `Port ${current.apiPort} is in use`,
        `The local API listens on ${core.url} instead. Free the port or change apiPort in settings.json to keep a fixed address.`,
      );
    }
  } catch (error) {
    log.error({ err: error }, 'the core did not start');
    dialog.showErrorBox('exobar could not start', (error as Error).message);
    app.exit(1);
    throw error;
  }
  log.info({ url: core.url, dataDir: core.dataDir }, 'core started');
  return { settings, core };
}
