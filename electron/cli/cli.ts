/**
 * The `exobar` command line: finds the subcommand in {@link COMMANDS} and runs it, each
 * from its own module in this folder (`exobar serve` runs the core and serves the page).
 *
 * Run through bin/exobar.js (tsx, no build needed): `npx exobar serve`,
 * `npm run serve -- --port 0`.
 */
import { packageVersion } from '../core/package-root';
import { EXIT_USAGE, UsageError, type CliCommand, type CliIo } from './cli-command';
import { diagnosticsCommand } from './diagnostics-command';
import { checkCommand } from './check-command';
import { serveCommand } from './serve-command';
import { statusCommand } from './status-command';

export { EXIT_USAGE, flagValue, parseFlags, UsageError, type CliCommand, type CliIo } from './cli-command';

/**
 * Every subcommand, in the order `exobar --help` lists them. To add one, export a
 * {@link CliCommand} from its own module and list it here.
 */
export const COMMANDS: CliCommand[] = [serveCommand, diagnosticsCommand, statusCommand, checkCommand];

export function mainUsage(commands: readonly CliCommand[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: exobar <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "exobar <command> --help" for its options.',
  ].join('\n');
}

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

/** Runs the command line; resolves with the exit code. */
export async function main(argv: string[], io: CliIo = defaultIo, commands: readonly CliCommand[] = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    io.out(mainUsage(commands));
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.out(packageVersion('unknown'));
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(name === undefined ? 'exobar: which command?' : `exobar: unknown command "${name}"`);
    io.err(mainUsage(commands));
    return EXIT_USAGE;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`exobar ${command.name}: ${error.message}`);
      io.err(command.usage);
      return EXIT_USAGE;
    }
    io.err(`exobar ${command.name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
