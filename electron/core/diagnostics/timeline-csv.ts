/**
 * timeline.csv: one row per request, with its timestamps (monotonic ms, the clock of
 * events.jsonl) and the parts of its time to first token, so a stall reads off
 * directly: a long `dispatch_ms` is the node, a long `ack_wait_ms` the runner busy
 * with a step (a prefill), a long `prefill_ms` the prompt or the shared GPU.
 */
import type { RequestTimeline } from '../node/node-types';
import { ttftParts } from './diagnosis';

export const TIMELINE_COLUMNS = [
  'request_id',
  'instance_id',
  'model',
  'outcome',
  'prompt_tokens',
  'completion_tokens',
  'arrived_ms',
  'dispatched_ms',
  'acknowledged_ms',
  'prefill_start_ms',
  'prefill_end_ms',
  'first_token_ms',
  'ended_ms',
  'ttft_ms',
  'load_ms',
  'dispatch_ms',
  'ack_wait_ms',
  'runner_wait_ms',
  'prefill_ms',
  'first_token_gap_ms',
  'concurrent_busy_instances',
  'cause',
] as const;

/** RFC 4180 quoting: only when the cell needs it. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(Math.round(value * 10) / 10) : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The CSV text. `causeOf` gives the diagnosis verdict of a request (empty when it was
 * not slow); `cell` redacts text cells. Keeps the most recent rows within `maxBytes`.
 */
export function timelineCsv(
  timelines: readonly RequestTimeline[],
  options: { causeOf?: (requestId: string) => string | null; cell?: (text: string) => string; maxBytes?: number; now?: number } = {},
): { text: string; rows: number; omittedRows: number } {
  const cell = options.cell ?? ((t: string) => t);
  const header = `${TIMELINE_COLUMNS.join(',')}\n`;
  const sorted = [...timelines].sort((a, b) => a.arrivedAt - b.arrivedAt);
  const lines = sorted.map((t) => {
    const parts = ttftParts(t, t.firstTokenAt ?? t.endedAt ?? options.now ?? t.arrivedAt);
    const values: Array<string | number | null> = [
      cell(t.requestId),
      cell(t.instanceId),
      cell(t.model),
      t.outcome,
      t.promptTokens,
      t.completionTokens,
      t.arrivedAt,
      t.dispatchedAt,
      t.acknowledgedAt,
      t.prefillStartAt,
      t.prefillEndAt,
      t.firstTokenAt,
      t.endedAt,
      t.firstTokenAt !== null ? t.firstTokenAt - t.arrivedAt : null,
      parts.loadMs,
      parts.dispatchMs,
      parts.ackWaitMs,
      parts.runnerWaitMs,
      parts.prefillMs,
      parts.firstTokenMs,
      cell(t.concurrentBusyInstances.join(';')),
      options.causeOf?.(t.requestId) ?? null,
    ];
    return `${values.map(csvCell).join(',')}\n`;
  });
  const maxBytes = options.maxBytes ?? Infinity;
  let bytes = Buffer.byteLength(header);
  let keep = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const size = Buffer.byteLength(lines[i]!);
    if (bytes + size > maxBytes) break;
    bytes += size;
    keep += 1;
  }
  const kept = lines.slice(lines.length - keep);
  return { text: header + kept.join(''), rows: kept.length, omittedRows: lines.length - kept.length };
}
