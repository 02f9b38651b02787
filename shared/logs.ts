/**
 * The log view's shared facts: the sources `GET /api/logs` lists (and the app's IPC gives
 * the same), which source is a model's log, and a line's level as the page filters it.
 */
import { z } from 'zod';

export const LogSourceKindSchema = z.enum(['runner', 'exobar', 'exo']);

export const LogSourceSchema = z.object({
  /** What `GET /api/logs/{source}` takes: `<instance>` (its runner log), `<instance>:stdout`, `exobar`, `exo`, `exo:stdout`. */
  id: z.string().min(1).max(200),
  /** In words: "Llama 3.2 1B (simulated): runner log". */
  title: z.string(),
  kind: LogSourceKindSchema,
  /** The instance a runner log belongs to; null for exobar and exo. */
  instanceId: z.string().nullable(),
  /** Bytes in the file when listed. */
  bytes: z.number().int().min(0),
});
export type LogSourceInfo = z.infer<typeof LogSourceSchema>;

export const LogSourceListSchema = z.object({ sources: z.array(LogSourceSchema) });
export type LogSourceList = z.infer<typeof LogSourceListSchema>;

/** A source id as the API and the IPC accept it. */
export const LogSourceIdSchema = z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/, 'a log source id: letters, digits and _ . : -');

/** The source of a model's runner log (its stderr, where the runner logs). */
export function runnerLogSource(instanceId: string): string {
  return instanceId;
}

/** The most lines a follow may ask for first (the API's `lines` bound). */
export const LOG_LINES_MAX = 10_000;

/** What a followed log sends its listener: the source first, then lines as they come, or why it stopped. */
export type LogStreamEvent = { kind: 'source'; id: string; title: string } | { kind: 'lines'; lines: string[] } | { kind: 'ended'; message: string };

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const PINO_LEVELS: Record<number, LogLevel> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const WORDS: Record<string, LogLevel> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'fatal',
  FATAL: 'fatal',
};
// A level word near the start: Python's "2026-12-01 10:00:00,000 INFO [...]", exo's "[ 10:00:00.000 | INFO ] ...".
const WORD = /\b(TRACE|DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\b/;

/**
 * A line's level: pino's JSON `level` (the sim runner, exobar's own log), else a level
 * word in its first 80 characters (Python's logging, exo's loguru lines); null when the
 * line says none (a traceback's lines, a protocol line).
 */
export function lineLevel(line: string): LogLevel | null {
  if (line.startsWith('{')) {
    const level = /"level":(\d+)/.exec(line);
    if (level) return PINO_LEVELS[Number(level[1])] ?? null;
  }
  const word = WORD.exec(line.slice(0, 80));
  return word ? WORDS[word[1]!]! : null;
}

/** True when `level` is `min` or more severe. */
export function atLeast(level: LogLevel, min: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(min);
}
