/**
 * The vocabulary every `exobar` subcommand shares: where it writes, what a command is,
 * usage errors and strict flag parsing. A leaf: the dispatcher (cli.ts) and each command
 * import it, so no command imports the dispatcher back.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';

/** Where a command writes; tests and embedders can capture it. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
}

/** One subcommand. `run` resolves with the process exit code. */
export interface CliCommand {
  name: string;
  /** One line for `exobar --help`. */
  summary: string;
  /** The full usage text for `exobar <name> --help` and for usage errors. */
  usage: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

/** A bad invocation: the command's usage is printed and the exit code is 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Exit code for a bad invocation (as getopt-style tools do). */
export const EXIT_USAGE = 2;

/**
 * Parses flags strictly (unknown flags and stray arguments are usage errors) and
 * turns node:util's messages into a {@link UsageError}.
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/** Validates one flag's value with zod; the message names the flag. */
export function flagValue<S extends z.ZodType>(flag: string, schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`--${flag}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  return parsed.data;
}
