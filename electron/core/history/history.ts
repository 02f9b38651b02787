/**
 * History across restarts, per model and minute: requests, errors, TTFT p50/p95, decode
 * tokens/s p50, the queue's maximum and runner restarts; kept 30 days in
 * `<dataDir>/history/history.jsonl` (the request log's store, jsonl-store.ts),
 * minutes older than a day compacted to hours. Fed from the request records, the
 * node's restart events and the snapshot's queues: no figure of its own.
 *
 * Each row holds mergeable histograms (log-histogram.ts), so rows written every few
 * seconds for one minute, and the minutes of an hour, merge exactly: a crash loses at
 * most the rows of the last `flushMs`, and a compaction changes no percentile.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { HISTORY_RANGE_MS, type HistoryAnswer, type HistoryModel, type HistoryPoint, type HistoryRange, type SlowerThanUsual } from '../../../shared/history';
import type { RequestRecord } from '../../../shared/request-record';
import { JsonlStore } from '../request-log/jsonl-store';
import { addTo, countOf, mergeInto, quantile, type LogHistogram } from './log-histogram';

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const KEEP_MS = 30 * DAY;
/** Minutes of 16 models for a day and hours for 30 days come to ~8 MB; compacted past this. */
const DISK_CAP_BYTES = 24 * 1024 * 1024;
/** The warning's threshold, and the least samples it trusts on each side. */
const SLOWER_FACTOR = 1.5;
const MIN_RECENT_SAMPLES = 10;
const MIN_USUAL_SAMPLES = 20;

const HistogramSchema = z.record(z.string(), z.number().int().nonnegative());
const RowSchema = z.object({
  model: z.string(),
  start: z.number(),
  spanMs: z.number(),
  requests: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  restarts: z.number().int().nonnegative(),
  queueMax: z.number().int().nonnegative(),
  ttft: HistogramSchema,
  decode: HistogramSchema,
});
type Row = z.infer<typeof RowSchema>;

const emptyRow = (model: string, start: number, spanMs: number): Row => ({
  model,
  start,
  spanMs,
  requests: 0,
  errors: 0,
  restarts: 0,
  queueMax: 0,
  ttft: {},
  decode: {},
});

function mergeRow(into: Row, row: Row): void {
  into.requests += row.requests;
  into.errors += row.errors;
  into.restarts += row.restarts;
  into.queueMax = Math.max(into.queueMax, row.queueMax);
  mergeInto(into.ttft, row.ttft);
  mergeInto(into.decode, row.decode);
}

/** Merges rows into one per model and span start (a span of `spanMs`, or each row's own when larger). */
function mergeRows(rows: Iterable<Row>, spanMs: number): Row[] {
  const merged = new Map<string, Row>();
  for (const row of rows) {
    const span = Math.max(spanMs, row.spanMs);
    const start = Math.floor(row.start / span) * span;
    const key = `${row.model}\u0000${start}`;
    let into = merged.get(key);
    if (!into) merged.set(key, (into = emptyRow(row.model, start, span)));
    mergeRow(into, row);
  }
  return [...merged.values()].sort((a, b) => a.start - b.start);
}

const round = (v: number | null): number | null => (v == null ? null : Math.round(v * 10) / 10);

function pointOf(row: Row): HistoryPoint {
  return {
    start: row.start,
    spanMs: row.spanMs,
    requests: row.requests,
    errors: row.errors,
    ttftP50Ms: round(quantile(row.ttft, 0.5)),
    ttftP95Ms: round(quantile(row.ttft, 0.95)),
    decodeTokensPerSecondP50: round(quantile(row.decode, 0.5)),
    queueMax: row.queueMax,
    restarts: row.restarts,
  };
}

export interface HistoryOptions {
  dataDir: string;
  /** How often the open minutes are written (ms). */
  flushMs?: number;
  now?: () => number;
}

export class History {
  private readonly store: JsonlStore<Row>;
  private readonly open = new Map<string, Row>();
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;
  private lastCompaction = 0;

  constructor(options: HistoryOptions) {
    this.now = options.now ?? Date.now;
    this.store = new JsonlStore<Row>({
      path: join(options.dataDir, 'history', 'history.jsonl'),
      schema: RowSchema,
      flushMs: 50,
      capBytes: DISK_CAP_BYTES,
      compact: (rows) => this.compacted(rows),
    });
    this.compact();
    this.timer = setInterval(() => this.flush(), options.flushMs ?? 5_000);
    this.timer.unref();
  }

  /** An ended request, in the minute it ended. */
  observe(record: RequestRecord): void {
    const row = this.openRow(record.model, record.endedAt);
    row.requests += 1;
    if (record.outcome === 'failed') row.errors += 1;
    if (record.ttftMs != null) addTo(row.ttft, record.ttftMs);
    if (record.decodeTokensPerSecond != null) addTo(row.decode, record.decodeTokensPerSecond);
  }

  /** A runner restart of one of the model's instances. */
  restart(model: string): void {
    this.openRow(model, this.now()).restarts += 1;
  }

  /** The model's requests waiting now (sampled from the snapshot). */
  queue(model: string, depth: number): void {
    if (depth <= 0 && !this.open.has(`${model}\u0000${Math.floor(this.now() / MINUTE) * MINUTE}`)) return;
    const row = this.openRow(model, this.now());
    row.queueMax = Math.max(row.queueMax, depth);
  }

  /** Writes the open rows (each a part of its minute; parts merge on read). */
  flush(): void {
    for (const row of this.open.values()) this.store.append(row);
    this.open.clear();
    this.store.flush();
    if (this.now() - this.lastCompaction > HOUR) this.compact();
  }

  /** Every model's points over the range, and its `slower_than_usual` warning. */
  query(range: HistoryRange, model?: string): HistoryAnswer {
    const now = this.now();
    const from = now - HISTORY_RANGE_MS[range];
    const rows = this.rows().filter((r) => r.start + r.spanMs > from && (model === undefined || r.model === model));
    // A chart of a week or a month shows hours; an hour or a day, minutes.
    const span = range === '7d' || range === '30d' ? HOUR : MINUTE;
    const models = [...new Set(rows.map((r) => r.model))].sort();
    const status = this.store.status();
    return {
      range,
      models: models.map((m): HistoryModel => ({
        model: m,
        points: mergeRows(
          rows.filter((r) => r.model === m),
          span,
        ).map(pointOf),
        slowerThanUsual: this.slowerThanUsual(m, now),
      })),
      diskBytes: status.diskBytes,
      diskCapBytes: status.capBytes,
      problem: status.problem,
    };
  }

  /** Every model's aggregates for 30 days (the diagnostic bundle's copy: no request content). */
  aggregates(): HistoryAnswer {
    return this.query('30d');
  }

  /**
   * TTFT p50 over the last hour against the 7 days before it, over the minutes whose
   * load (requests per minute) was within half to twice the last hour's.
   */
  slowerThanUsual(model: string, now = this.now()): SlowerThanUsual | null {
    const mine = this.rows().filter((r) => r.model === model);
    const recent = mergeRows(
      mine.filter((r) => r.start >= now - HOUR),
      MINUTE,
    );
    const recentTtft: LogHistogram = {};
    let recentRequests = 0;
    for (const r of recent) {
      mergeInto(recentTtft, r.ttft);
      recentRequests += r.requests;
    }
    if (countOf(recentTtft) < MIN_RECENT_SAMPLES) return null;
    const activeMinutes = recent.filter((r) => r.requests > 0).length;
    const perMinute = recentRequests / Math.max(1, activeMinutes);
    const usualTtft: LogHistogram = {};
    for (const r of mergeRows(
      mine.filter((x) => x.start < now - HOUR && x.start >= now - HOUR - 7 * DAY),
      MINUTE,
    )) {
      const load = r.requests / (r.spanMs / MINUTE);
      if (load >= perMinute / 2 && load <= perMinute * 2) mergeInto(usualTtft, r.ttft);
    }
    if (countOf(usualTtft) < MIN_USUAL_SAMPLES) return null;
    const last = quantile(recentTtft, 0.5)!;
    const usual = quantile(usualTtft, 0.5)!;
    if (last <= usual * SLOWER_FACTOR) return null;
    return {
      code: 'slower_than_usual',
      model,
      lastHourP50Ms: Math.round(last),
      usualP50Ms: Math.round(usual),
      requestsPerMinute: Math.round(perMinute * 10) / 10,
      message: `${model} is slower than usual: TTFT p50 ${Math.round(last)} ms over the last hour against ${Math.round(usual)} ms over the last 7 days at similar load (${Math.round(perMinute * 10) / 10} requests/min)`,
    };
  }

  status() {
    return this.store.status();
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    this.store.close();
  }

  private openRow(model: string, at: number): Row {
    const start = Math.floor(at / MINUTE) * MINUTE;
    const key = `${model}\u0000${start}`;
    let row = this.open.get(key);
    if (!row) this.open.set(key, (row = emptyRow(model, start, MINUTE)));
    return row;
  }

  private rows(): Row[] {
    return [...this.store.all(), ...this.open.values()];
  }

  private compact(): void {
    this.lastCompaction = this.now();
    this.store.replace(this.compacted([...this.store.all()]));
  }

  /** Minutes merged, hours for what is older than a day, nothing older than 30 days. */
  private compacted(rows: Row[]): Row[] {
    const now = this.now();
    const kept = rows.filter((r) => r.start + r.spanMs > now - KEEP_MS);
    const old = kept.filter((r) => r.start < now - DAY);
    const recent = kept.filter((r) => r.start >= now - DAY);
    return [...mergeRows(old, HOUR), ...mergeRows(recent, MINUTE)];
  }
}
