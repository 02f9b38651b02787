/**
 * An append-only JSON-lines file with compaction: the request log's and the history's
 * store. Plain `node:fs`, so it runs the same in plain Node 20 (`exobar serve`, the
 * tests) and in Electron's main process, with no native module to rebuild
 * (docs/request-log.md says why this over an embedded database).
 *
 * What a crash can do and what it cannot:
 * - Rows are buffered and written every `flushMs` with one `write` of whole lines; a
 *   SIGKILL loses at most the rows of that last interval.
 * - A kill in the middle of a write leaves at most one torn last line: it is dropped at
 *   the next open (counted in `tornLines`), every row before it is kept.
 * - Compaction writes a new file beside the old one and renames it over it (atomic on
 *   one file system): a crash during compaction leaves the old file whole.
 * - A file that cannot be read, or holds bad lines other than a torn last one, is set
 *   aside (renamed `<name>.corrupt-<time>`), reported in `problem`, and a new one is
 *   started with the rows that did read.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { z } from 'zod';

export interface JsonlStoreOptions<T> {
  path: string;
  schema: z.ZodType<T>;
  /** How often buffered rows are written (ms). */
  flushMs?: number;
  /** Compacts when the file grows past this many bytes. */
  capBytes: number;
  /** The rows a compaction keeps (in order); called with every row the store holds. */
  compact: (rows: T[]) => T[];
}

/** What the store says about itself (shown in the API and the page). */
export interface JsonlStoreStatus {
  path: string;
  rows: number;
  diskBytes: number;
  capBytes: number;
  /** A torn last line dropped at open (a crash mid-write). */
  tornLines: number;
  /** Set when the file was unreadable or corrupt: what happened and where the old file is. */
  problem: string | null;
  setAsidePath: string | null;
}

export class JsonlStore<T> {
  private rows: T[] = [];
  private pending: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private diskBytes = 0;
  private tornLines = 0;
  private problem: string | null = null;
  private setAsidePath: string | null = null;
  private closed = false;

  constructor(private readonly options: JsonlStoreOptions<T>) {
    mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
    this.load();
  }

  /** Every row held, oldest first (the caller must not change them). */
  all(): readonly T[] {
    return this.rows;
  }

  /** Appends a row; written within `flushMs`. */
  append(row: T): void {
    if (this.closed) return;
    this.rows.push(row);
    this.pending.push(JSON.stringify(row));
    this.timer ??= setTimeout(() => this.flush(), this.options.flushMs ?? 500);
    this.timer.unref();
  }

  /** Replaces every row (a compaction by the owner) and rewrites the file at once. */
  replace(rows: T[]): void {
    this.rows = rows;
    this.pending = [];
    this.rewrite();
  }

  /** Writes what is buffered now; compacts when the file passed its cap. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    const text = this.pending.join('\n') + '\n';
    this.pending = [];
    const fd = openSync(this.options.path, 'a', 0o600);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    this.diskBytes += Buffer.byteLength(text);
    if (this.diskBytes > this.options.capBytes) this.replace(this.options.compact(this.rows));
  }

  status(): JsonlStoreStatus {
    return {
      path: this.options.path,
      rows: this.rows.length,
      diskBytes: this.diskBytes + this.pending.reduce((n, line) => n + Buffer.byteLength(line) + 1, 0),
      capBytes: this.options.capBytes,
      tornLines: this.tornLines,
      problem: this.problem,
      setAsidePath: this.setAsidePath,
    };
  }

  /** Writes what is buffered and stops taking rows. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private load(): void {
    const path = this.options.path;
    if (!existsSync(path)) return;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      this.setAside(`could not be read (${(error as Error).message})`);
      return;
    }
    const lines = text.split('\n');
    // A file ends with a newline: the last element is empty unless the last write was torn.
    const last = lines.pop() ?? '';
    let bad = 0;
    const rows: T[] = [];
    for (const line of lines) {
      if (line === '') continue;
      const row = this.parse(line);
      if (row === null) bad += 1;
      else rows.push(row);
    }
    if (last !== '') {
      const row = this.parse(last);
      if (row === null) this.tornLines = 1;
      else rows.push(row);
    }
    this.rows = rows;
    if (bad > 0) {
      this.setAside(`held ${bad} unreadable line${bad === 1 ? '' : 's'} (${rows.length} good rows kept)`);
      this.rewrite();
      return;
    }
    this.diskBytes = Buffer.byteLength(text);
    // A torn tail is cut off now, so the next append starts on a line of its own.
    if (this.tornLines > 0 || this.diskBytes > this.options.capBytes) this.replace(this.options.compact(this.rows));
  }

  private parse(line: string): T | null {
    try {
      const parsed = this.options.schema.safeParse(JSON.parse(line));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  private setAside(why: string): void {
    const path = this.options.path;
    const aside = join(dirname(path), `${basename(path)}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    try {
      renameSync(path, aside);
      this.setAsidePath = aside;
      this.problem = `${basename(path)} ${why}: set aside as ${basename(aside)}, a new one started`;
    } catch (error) {
      this.problem = `${basename(path)} ${why}, and could not be set aside (${(error as Error).message})`;
    }
  }

  /** Writes every row to a new file and renames it over the old one. */
  private rewrite(): void {
    const path = this.options.path;
    const tmp = `${path}.tmp`;
    const text = this.rows.map((row) => JSON.stringify(row) + '\n').join('');
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    this.diskBytes = existsSync(path) ? statSync(path).size : 0;
  }
}
