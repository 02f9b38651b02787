/**
 * `exobar serve --exo-start [--exo-command CMD]`: the flags, their usage lines and the
 * start itself, kept here so the command line needs only a few lines (see
 * docs/exo-process.md, "exobar serve").
 */
import type { ExoProcessState } from '../../../shared/exo-process';
import type { FastSynchOverride } from '../../../shared/snapshot';
import type { ExoProcessSettings } from './exo-command';
import { ExoProcessManager, type ExoProcessManagerOptions } from './exo-process-manager';

/** node:util parseArgs options to add to `exobar serve`'s. */
export const EXO_SERVE_FLAGS = {
  'exo-start': { type: 'boolean' },
  'exo-command': { type: 'string' },
} as const;

/** Lines for `exobar serve --help`. */
export const EXO_SERVE_USAGE = [
  "  --exo-start         also start this Mac's exo (exo.command, exo.args and exo.env from settings),",
  '                      with fast synch decided by exobar; stopped when exobar stops',
  '  --exo-command CMD   the exo command to start instead of exo.command (with --exo-start)',
].join('\n');

export interface ExoServeFlags {
  'exo-start'?: boolean;
  'exo-command'?: string;
}

/**
 * What the flags ask for, before any settings are read: null when exo is not to be
 * started, else the command that replaces `exo.command` (undefined: keep it). A bad
 * combination throws the error `usageError` makes (the CLI passes its UsageError).
 */
export function exoServeRequest(flags: ExoServeFlags, usageError: (message: string) => Error = (m) => new Error(m)): { command: string | undefined } | null {
  const command = flags['exo-command'];
  if (command !== undefined && command.trim() === '')
    throw usageError('--exo-command: expected a command such as exo or /Applications/EXO.app/Contents/Resources/exo/exo');
  if (!flags['exo-start']) {
    if (command !== undefined) throw usageError('--exo-command needs --exo-start');
    return null;
  }
  return { command };
}

/**
 * What the flags ask for: null when exo is not to be started, else the settings to
 * start it with (`--exo-command` over `exo.command`). A bad combination throws the
 * error `usageError` makes (the CLI passes its UsageError).
 */
export function exoServeSettings(
  flags: ExoServeFlags,
  settings: ExoProcessSettings,
  usageError: (message: string) => Error = (m) => new Error(m),
): ExoProcessSettings | null {
  const request = exoServeRequest(flags, usageError);
  if (!request) return null;
  return { command: request.command ?? settings.command, args: settings.args, env: settings.env };
}

export interface ServeExoOptions extends Omit<ExoProcessManagerOptions, 'settings'> {
  settings: ExoProcessSettings;
  /** The settings' default fast-synch override (auto decides from what this Mac runs). */
  defaultFastSynch: FastSynchOverride;
  /** Where progress goes (the CLI's stderr). */
  log(line: string): void;
}

/**
 * Says every change of exo's state as one `exo: <status>[ (pid N)]: <progress or
 * reason>` line (a repeat of the last line is skipped); returns the unsubscribe.
 */
export function reportExoProgress(manager: ExoProcessManager, log: (line: string) => void): () => void {
  let said = '';
  return manager.subscribe((state) => {
    if (state.status === 'idle') return;
    const line = `exo: ${state.status}${state.pid ? ` (pid ${state.pid})` : ''}${state.progress ? `: ${state.progress}` : state.reason ? `: ${state.reason}` : ''}`;
    if (line !== said) log((said = line));
  });
}

/** After a start: the fast-synch value and what exo's own log said, or, on failure, exo's last lines. */
export function reportExoOutcome(state: ExoProcessState, log: (line: string) => void): void {
  if (state.status === 'running' && state.fastSynch) {
    log(
      `exo: fast synch ${state.fastSynch.enabled ? 'on' : 'off'} (${state.fastSynch.reason}); exo's own log says ${state.fastSynch.observed === null ? 'nothing yet' : state.fastSynch.observed ? 'ON' : 'OFF'}`,
    );
  } else if (state.status !== 'running') {
    for (const line of state.lastLines.slice(-10)) log(`exo| ${line}`);
  }
}

/**
 * Starts exo for `exobar serve` and says what happens, line by line ("exo: starting",
 * "exo: running, pid N", or the failure with exo's last lines). Resolves with the
 * manager whatever the outcome: the caller puts its state in the snapshot and calls
 * `shutdown()` when exobar stops.
 */
export async function startServeExo(options: ServeExoOptions): Promise<ExoProcessManager> {
  const { log, defaultFastSynch, ...managerOptions } = options;
  const manager = new ExoProcessManager(managerOptions);
  reportExoProgress(manager, log);
  reportExoOutcome(await manager.start({ instances: [], override: defaultFastSynch, acknowledgeRisk: false }), log);
  return manager;
}
