/**
 * The command line and environment exobar starts exo with. Settings give the command
 * (`exo.command`, default `exo`), extra arguments (`exo.args`) and extra environment
 * (`exo.env`); exobar owns the API port and fast synch, so those are set last and any
 * copy of them in the settings is dropped (and said).
 */
import { fastSynchEnv } from '../../../shared/fast-synch-policy';

export interface ExoProcessSettings {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}

export const DEFAULT_EXO_SETTINGS: ExoProcessSettings = { command: 'exo', args: [], env: {} };

export interface ExoCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Arguments from the settings that exobar dropped because it sets them itself. */
  dropped: string[];
}

/** Flags exobar sets itself; a value-taking one also drops its separate value. */
const OWNED_FLAGS: Record<string, boolean> = { '--api-port': true, '--fast-synch': false, '--no-fast-synch': false };

/**
 * Builds exo's command: the settings' arguments without the flags exobar owns, then
 * `--api-port <port>` and `--fast-synch`/`--no-fast-synch` (which also makes exo log
 * "FAST_SYNCH forced ON|OFF", the line exobar checks). The environment carries
 * EXO_FAST_SYNCH (and MLX_METAL_FAST_SYNCH, as for local runners) over everything.
 */
export function buildExoCommand(settings: ExoProcessSettings, apiPort: number, fastSynch: boolean, baseEnv: NodeJS.ProcessEnv): ExoCommand {
  const args: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < settings.args.length; i += 1) {
    const arg = settings.args[i]!;
    const name = arg.split('=')[0]!;
    if (name in OWNED_FLAGS) {
      dropped.push(arg);
      if (OWNED_FLAGS[name] && !arg.includes('=') && i + 1 < settings.args.length) dropped.push(settings.args[++i]!);
      continue;
    }
    args.push(arg);
  }
  args.push('--api-port', String(apiPort), fastSynch ? '--fast-synch' : '--no-fast-synch');
  return { command: settings.command, args, env: { ...baseEnv, ...settings.env, ...fastSynchEnv(fastSynch) }, dropped };
}
