/**
 * The request log: the last 10,000 requests (local and through exobar to exo) and the
 * models' loads and unloads, kept in `<dataDir>/request-log/requests.jsonl` across
 * restarts (jsonl-store.ts: what a crash can and cannot do to it). Numbers and names
 * only, never a prompt or an answer (shared/request-record.ts).
 */
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { z } from 'zod';
import {
  matchesRequestQuery,
  ModelEventRecordSchema,
  REQUEST_RECORD_COLUMNS,
  RequestRecordSchema,
  type ModelEventRecord,
  type RequestList,
  type RequestQuery,
  type RequestRecord,
} from '../../../shared/request-record';
import { JsonlStore, type JsonlStoreStatus } from './jsonl-store';

/** Requests kept. */
export const REQUEST_LOG_CAPACITY = 10_000;
/** Loads and unloads kept beside them. */
const MODEL_EVENT_CAPACITY = 2_000;
/** The file's cap: 10,000 rows of ~700 bytes, twice over before a compaction trims it. */
const DISK_CAP_BYTES = 16 * 1024 * 1024;

/** A row of the file: a request (no `kind`) or a model event. */
const LogRowSchema = z.union([ModelEventRecordSchema, RequestRecordSchema]);
type LogRow = z.infer<typeof LogRowSchema>;

const isEvent = (row: LogRow): row is ModelEventRecord => 'kind' in row && row.kind === 'model_event';

/** Keeps the newest requests and events within their capacities, in order. */
function keepNewest(rows: LogRow[], capacity = REQUEST_LOG_CAPACITY): LogRow[] {
  let requests = 0;
  let events = 0;
  const kept: LogRow[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (isEvent(row) ? events++ < MODEL_EVENT_CAPACITY : requests++ < capacity) kept.push(row);
  }
  return kept.reverse();
}

export interface RequestLogOptions {
  dataDir: string;
  /** Requests kept (default 10,000). */
  capacity?: number;
  flushMs?: number;
}

export class RequestLog {
  private readonly store: JsonlStore<LogRow>;
  private readonly capacity: number;
  private requestCount = 0;

  constructor(options: RequestLogOptions) {
    this.capacity = options.capacity ?? REQUEST_LOG_CAPACITY;
    this.store = new JsonlStore<LogRow>({
      path: join(options.dataDir, 'request-log', 'requests.jsonl'),
      schema: LogRowSchema,
      flushMs: options.flushMs,
      capBytes: DISK_CAP_BYTES,
      compact: (rows) => keepNewest(rows, this.capacity),
    });
    // What the file held may be more than the capacity (the cap compacts by bytes).
    if (this.store.all().filter((r) => !isEvent(r)).length > this.capacity) this.store.replace(keepNewest([...this.store.all()], this.capacity));
    this.requestCount = this.store.all().filter((r) => !isEvent(r)).length;
  }

  /** Records an ended request. */
  record(record: RequestRecord): void {
    this.store.append(record);
    this.requestCount += 1;
    // Memory stays bounded between the file's compactions.
    if (this.requestCount > this.capacity * 1.5) {
      this.store.replace(keepNewest([...this.store.all()], this.capacity));
      this.requestCount = this.capacity;
    }
  }

  /**
   * Records a model's load, unload or another lifecycle step beside the requests (the
   * on-demand loading calls this): `{ model, instance, event: 'load', reason, durationMs }`.
   */
  recordModelEvent(event: Omit<ModelEventRecord, 'kind' | 'at'> & { at?: number }): void {
    this.store.append({ kind: 'model_event', ...event, at: event.at ?? Date.now() });
  }

  /** The requests that pass the query, newest first, at most `limit`; loads and unloads alike. */
  query(query: RequestQuery): RequestList {
    const requests: RequestRecord[] = [];
    const events: ModelEventRecord[] = [];
    const rows = this.store.all();
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      if (isEvent(row)) {
        if (events.length < query.limit && (query.model === undefined || row.model === query.model) && (query.since === undefined || row.at >= query.since))
          events.push(row);
      } else if (requests.length < query.limit && matchesRequestQuery(row, query)) requests.push(row);
    }
    const status = this.store.status();
    return {
      requests,
      events,
      total: Math.min(this.requestCount, rows.length),
      diskBytes: status.diskBytes,
      diskCapBytes: status.capBytes,
      problem: status.problem,
    };
  }

  /** The same requests as CSV (a header row, then one row per request, every field). */
  csv(query: RequestQuery): string {
    const { requests } = this.query(query);
    return stringify(
      requests.map((r) => REQUEST_RECORD_COLUMNS.map((c) => r[c] ?? '')),
      { header: true, columns: REQUEST_RECORD_COLUMNS as string[] },
    );
  }

  status(): JsonlStoreStatus {
    return this.store.status();
  }

  /** Writes what is buffered (shutdown). */
  close(): void {
    this.store.close();
  }
}
