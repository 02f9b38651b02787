/**
 * The log view's lines: each as shown (a pino JSON record formatted as the terminal shows
 * it, anything else as written), its level for the filter, and a bounded buffer so a log
 * that runs for days never grows the page. A line that says no level (a traceback's
 * lines, a record's continuation) takes the level of the line before it, so "warnings
 * and errors" keeps an error's traceback with it.
 */
import { formatRecord } from '../../../shared/log-record-format';
import { atLeast, lineLevel, type LogLevel } from '../../../shared/logs';

export interface LogLine {
  /** Increases by one per line received: React's key, stable while the buffer drops old lines. */
  seq: number;
  /** The line as the file holds it (what Copy copies). */
  raw: string;
  /** The line as shown (and searched). */
  text: string;
  /** Its level, or the one before it; null when nothing before it said one. */
  level: LogLevel | null;
}

/** Lines kept per followed log; older ones are dropped (the file keeps them). */
export const LOG_KEPT_LINES = 5_000;

/** A pino record formatted, anything else as it is. */
export function displayText(raw: string): string {
  if (!raw.startsWith('{')) return raw;
  try {
    const record = JSON.parse(raw) as unknown;
    if (record && typeof record === 'object' && !Array.isArray(record) && 'level' in record) return formatRecord(record as Record<string, unknown>);
  } catch {
    // Not JSON after all: shown as written.
  }
  return raw;
}

export class LogBuffer {
  private lines: LogLine[] = [];
  private nextSeq = 0;
  private lastLevel: LogLevel | null = null;
  /** Lines dropped from the start to stay within the cap. */
  dropped = 0;

  constructor(private readonly cap = LOG_KEPT_LINES) {}

  append(raws: readonly string[]): void {
    for (const raw of raws) {
      const level = lineLevel(raw) ?? this.lastLevel;
      this.lastLevel = level;
      this.lines.push({ seq: this.nextSeq++, raw, text: displayText(raw), level });
    }
    const over = this.lines.length - this.cap;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }

  /** Every line kept, oldest first (a new array each call: safe to hand to React state). */
  all(): LogLine[] {
    return this.lines.slice();
  }

  get size(): number {
    return this.lines.length;
  }

  get received(): number {
    return this.nextSeq;
  }
}

export type LevelFilter = 'all' | LogLevel;

/** The lines at `min` or above whose shown text holds `search` (any case). */
export function filterLines(lines: readonly LogLine[], min: LevelFilter, search: string): LogLine[] {
  const needle = search.trim().toLowerCase();
  return lines.filter((l) => (min === 'all' || (l.level !== null && atLeast(l.level, min))) && (!needle || l.text.toLowerCase().includes(needle)));
}
