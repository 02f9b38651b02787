/**
 * The log of `exobar serve` (and of the core started without a logger): human-readable
 * lines in a terminal, JSON lines otherwise (a pipe, a file, a log collector) or when
 * asked (`EXOBAR_LOG_FORMAT=json`, `exobar serve --log-format json`). The level comes
 * from `EXOBAR_LOG_LEVEL` (default info: one line per request).
 *
 * Why a formatter by hand: pino-pretty is not a dependency, and a pino transport runs
 * in a worker thread loaded from a module path, which a bundled app and tsx make
 * fragile. pino writes each record as one JSON line to any object with `write`, so
 * the human format is a small in-process destination that parses that line and
 * prints it again; the JSON format is pino's own output unchanged.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { z } from 'zod';
import { withOwnLog } from './logs/own-log';
import { formatRecord } from '../../shared/log-record-format';

export { formatRecord } from '../../shared/log-record-format';

export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

const LogFormatSchema = z.enum(LOG_FORMATS);
const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * The format to use: the flag, else `EXOBAR_LOG_FORMAT`, else pretty in a terminal and
 * JSON when the output is not one. A value that is neither is an error that says so.
 */
export function resolveLogFormat(options: { flag?: string; env: NodeJS.ProcessEnv; isTTY: boolean }): LogFormat {
  const asked = options.flag ?? (options.env.EXOBAR_LOG_FORMAT || undefined);
  if (asked === undefined) return options.isTTY ? 'pretty' : 'json';
  const parsed = LogFormatSchema.safeParse(asked);
  if (!parsed.success)
    throw new Error(`the log format must be "pretty" or "json" (got "${asked}"; from ${options.flag !== undefined ? '--log-format' : 'EXOBAR_LOG_FORMAT'})`);
  return parsed.data;
}

/** The level from `EXOBAR_LOG_LEVEL` (default info); an unknown level is an error that lists the known ones. */
export function resolveLogLevel(env: NodeJS.ProcessEnv): string {
  const asked = env.EXOBAR_LOG_LEVEL || 'info';
  const parsed = LogLevelSchema.safeParse(asked);
  if (!parsed.success) throw new Error(`EXOBAR_LOG_LEVEL must be one of ${LogLevelSchema.options.join(', ')} (got "${asked}")`);
  return parsed.data;
}

/** A pino destination that writes each record to `out` as a human line (see {@link formatRecord}). */
export function prettyDestination(out: { write(text: string): unknown }): DestinationStream {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        // Not a record (cannot happen with pino's output): pass it through rather than lose it.
        out.write(line);
        return;
      }
      out.write(`${formatRecord(record)}\n`);
    },
  };
}

export interface TerminalLoggerOptions {
  format: LogFormat;
  level: string;
  /** Where lines go; default stderr (stdout is for the CLI's own output: the address and token line). */
  out?: { write(text: string): unknown };
  /** exobar's own log file (logs/own-log.ts), written beside the terminal; none when absent. */
  ownLog?: string | null;
}

/** The logger for a terminal or a pipe, in the format and level given. */
export function createTerminalLogger(options: TerminalLoggerOptions): Logger {
  const out = options.out ?? null;
  const destination = options.format === 'pretty' ? prettyDestination(out ?? process.stderr) : out ? (out as DestinationStream) : pino.destination(2);
  return pino({ name: 'exobar', level: options.level }, withOwnLog(destination, options.level, options.ownLog));
}
