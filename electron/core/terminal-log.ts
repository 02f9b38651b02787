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

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every record has, or that the human line shows in its own place. */
const SHOWN_APART = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'component']);

function clock(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(11, 23);
}

function value(v: unknown): string {
  if (typeof v === 'string') return /\s/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/**
 * One JSON record as a human line. A request reads
 * `12:00:01.234 INFO  POST /v1/chat/completions 200 812.4 ms sim/llama-3.2-1b`;
 * anything else `12:00:01.234 WARN  <message> key=value ...`, with an error's message
 * and the first line of its stack.
 */
export function formatRecord(record: Record<string, unknown>): string {
  const level = (LEVEL_NAMES[Number(record.level)] ?? String(record.level)).padEnd(5);
  const time = typeof record.time === 'number' ? clock(record.time) : '--:--:--.---';
  if (record.msg === 'request' && typeof record.method === 'string' && typeof record.path === 'string') {
    const model = typeof record.model === 'string' ? ` ${record.model}` : '';
    return `${time} ${level} ${record.method} ${record.path} ${String(record.status)} ${String(record.ms)} ms${model}`;
  }
  const rest = Object.entries(record)
    .filter(([key]) => !SHOWN_APART.has(key) && key !== 'err')
    .map(([key, v]) => `${key}=${value(v)}`);
  const err = record.err as { message?: unknown; stack?: unknown } | undefined;
  if (err && typeof err === 'object') rest.push(`error=${value(err.message ?? err)}`);
  const component = typeof record.component === 'string' ? `[${record.component}] ` : '';
  return `${time} ${level} ${component}${String(record.msg ?? '')}${rest.length ? ` ${rest.join(' ')}` : ''}`;
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
}

/** The logger for a terminal or a pipe, in the format and level given. */
export function createTerminalLogger(options: TerminalLoggerOptions): Logger {
  const out = options.out ?? null;
  const destination = options.format === 'pretty' ? prettyDestination(out ?? process.stderr) : out ? (out as DestinationStream) : pino.destination(2);
  return pino({ name: 'exobar', level: options.level }, destination);
}
