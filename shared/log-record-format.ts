/**
 * One pino JSON record as a human line, the same in the terminal (`exobar serve`'s pretty
 * format) and in the page's log view: `12:00:01.234 INFO  [api] message key=value`.
 * Plain data in, text out: no pino, so the page bundles it.
 */

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
