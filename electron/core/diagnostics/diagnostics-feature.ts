/**
 * What the operator reads when something went wrong, as a core feature: the logs
 * (exobar's own, the runners', exo's on this Mac) and the diagnostic bundle.
 */
import type { CoreContext, StartedFeature } from '../core-feature';
import type { ExoAttachment } from '../exo/attach/exo-attachment';
import type { ExoProcessManager } from '../exo-process';
import type { History } from '../history/history';
import { logRoutes } from '../logs/log-routes';
import { diagnosticsRoutes } from './diagnostics-routes';

export interface DiagnosticsFeatureOptions {
  /** exobar's own log file (the log source `exobar`). */
  ownLog: string;
  exo: Pick<ExoAttachment, 'localLogFile' | 'bundleSource'>;
  exoProcess: ExoProcessManager;
  history: Pick<History, 'aggregates'>;
}

export function startDiagnostics(ctx: CoreContext, options: DiagnosticsFeatureOptions): StartedFeature {
  const { exo } = options;
  return {
    routes: [
      ...logRoutes({ dataDir: ctx.dataDir, ownLog: options.ownLog, exoOwnLog: () => exo.localLogFile() }),
      ...diagnosticsRoutes({
        dataDir: ctx.dataDir,
        getSettings: () => ctx.getSettings(),
        exo: () => exo.bundleSource(),
        exoProcess: options.exoProcess,
        history: () => options.history.aggregates(),
      }),
    ],
  };
}
