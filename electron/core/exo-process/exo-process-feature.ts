/**
 * This Mac's exo as a core feature (docs/exo-process.md): the manager, idle until
 * started, its `exoProcess` section and warning, its endpoints, and its shutdown (only
 * an exo exobar spawned is stopped). `startIfAsked` starts exo once the API listens,
 * when the caller or the setting `exo.start` says so.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import { reportExoOutcome, reportExoProgress } from './cli-options';
import { ExoProcessManager, type ExoProcessManagerOptions } from './exo-process-manager';
import { exoProcessRoutes } from './exo-process-routes';
import { showExoProcess } from './exo-process-section';

/** How the core runs this Mac's exo. */
export interface ExoStartOptions {
  /** Start exo with the core (`exobar serve --exo-start`); default: the setting `exo.start`. */
  start?: boolean;
  /** Replaces `exo.command` (`--exo-command`). */
  command?: string;
  /** Where exo's progress goes, one line per change (the CLI's stderr); default: the core's log. */
  log?: (line: string) => void;
  /** The manager's port, timing, crash policy and base environment (tests). */
  manager?: Omit<ExoProcessManagerOptions, 'dataDir' | 'settings'>;
}

export function startExoProcess(ctx: CoreContext, options: ExoStartOptions = {}): StartedFeature & { exoProcess: ExoProcessManager; startIfAsked(): void } {
  const exoCommand = options.command;
  const exoProcess = new ExoProcessManager({
    apiPort: ctx.settings.exo.apiPort,
    ...options.manager,
    dataDir: ctx.dataDir,
    logger: ctx.logger.child({ component: 'exo-process' }),
    // Read at every start: a settings change applies at the next one.
    settings: () => ({ ...ctx.getSettings().exo, ...(exoCommand ? { command: exoCommand } : {}) }),
  });
  const stopShowing = showExoProcess(exoProcess, ctx.hub);
  return {
    exoProcess,
    routes: exoProcessRoutes({ manager: exoProcess, getSettings: () => ctx.getSettings() }),
    startIfAsked() {
      // Every change of exo's state is said (stderr for the CLI, the log for the app), whoever started it.
      const exoLog = options.log ?? ((line: string) => ctx.logger.info({ component: 'exo-process' }, line));
      reportExoProgress(exoProcess, exoLog);
      if (!(options.start ?? ctx.settings.exo.start)) return;
      // Not awaited: exo may take minutes to answer (an election); the state shows the progress.
      exoProcess.start({ instances: [], override: ctx.settings.defaultFastSynch, acknowledgeRisk: false }).then(
        (state) => reportExoOutcome(state, exoLog),
        (error: unknown) => exoLog(`exo: not started: ${(error as Error).message}`),
      );
    },
    async stop() {
      await exoProcess.shutdown();
      stopShowing();
    },
  };
}
