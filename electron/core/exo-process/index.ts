/**
 * This Mac's exo run by exobar: the API the rest of the core uses. See
 * docs/exo-process.md for the rules and shared/exo-process.ts for the state.
 */
export {
  DEFAULT_EXO_API_PORT,
  DEFAULT_EXO_TIMING,
  ExoProcessError,
  ExoProcessManager,
  type ExoFastSynchCheck,
  type ExoProcessManagerOptions,
  type ExoRestartRequest,
  type ExoTiming,
  type SpanningInstance,
} from './exo-process-manager';
export { DEFAULT_CRASH_POLICY, type ExoCrashPolicy } from './exo-crash-policy';
export { DEFAULT_EXO_SETTINGS, type ExoProcessSettings } from './exo-command';
export { exoLogDir, type ExoLogBundleFile } from './exo-logs';
export {
  EXO_SERVE_FLAGS,
  EXO_SERVE_USAGE,
  exoServeRequest,
  exoServeSettings,
  reportExoOutcome,
  reportExoProgress,
  startServeExo,
  type ExoServeFlags,
  type ServeExoOptions,
} from './cli-options';
export { exoProcessRoutes, type ExoProcessRoutesOptions } from './exo-process-routes';
export { showExoProcess } from './exo-process-section';
export { controlExoProcess, refusalOrUnderWay, type ExoControlContext } from './exo-process-control';
export { thisMacExoInstances } from './this-mac-instances';
export { thisMacFastSynch, withThisMacFastSynch, exoFastSynchMismatchWarning } from '../../../shared/exo-process';
