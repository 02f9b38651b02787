/**
 * Runner log tails for the bundle. The supervisor keeps each runner's stdout and stderr
 * in memory (a bounded tail) and in size-capped files, `<dataDir>/logs/<instance>/
 * stdout.log` and `stderr.log`, each rotated once to `<name>.1` at its cap
 * (process/log-tail.ts). The bundle takes the in-memory tail of a live runner and
 * the files otherwise (a deleted instance, or an export from a data directory), and
 * never more than its cap: the start of a long log is dropped, with a marker.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type LogStream = 'stdout' | 'stderr';

export interface LogTail {
  text: string;
  /** Bytes of the log that exist (in memory or on disk). */
  sourceBytes: number;
  /** Bytes left out at the start. */
  omittedBytes: number;
  source: 'memory' | 'file' | 'none';
}

/** The directory holding a runner's logs. */
export function runnerLogDir(dataDir: string, instanceId: string): string {
  return join(dataDir, 'logs', instanceId);
}

/**
 * The last `capBytes` of `buffer`, starting after a line break when it had to cut, so
 * no half line (and no half of a secret the redactor would then miss) opens the tail.
 */
export function tailBytes(buffer: Buffer, capBytes: number): { text: string; omittedBytes: number } {
  if (buffer.length <= capBytes) return { text: buffer.toString('utf8'), omittedBytes: 0 };
  let start = buffer.length - capBytes;
  const newline = buffer.indexOf(0x0a, start);
  if (newline !== -1 && newline < buffer.length - 1) start = newline + 1;
  return { text: buffer.subarray(start).toString('utf8'), omittedBytes: start };
}

/** The marker that opens a cut log. */
export function truncationMarker(omittedBytes: number): string {
  return `[exobar diagnostics: the first ${omittedBytes} bytes of this log are not in the bundle]\n`;
}

/** The last `bytes` bytes of a file and its size; null when it cannot be opened. */
export async function readLastBytes(path: string, bytes: number): Promise<{ data: Buffer; size: number } | null> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const data = Buffer.alloc(length);
    await handle.read(data, 0, length, size - length);
    return { data, size };
  } finally {
    await handle.close();
  }
}

/**
 * Reads the end of one runner log from disk: `<name>.log`, preceded by the end of its
 * rotated `<name>.log.1` when the current file is shorter than the cap. `prefix` names
 * other logs of the same kind (`exo-` for exo's `exo-stdout.log`).
 */
export async function readLogFileTail(dir: string, stream: LogStream, capBytes: number, prefix = ''): Promise<LogTail> {
  const current = await readLastBytes(join(dir, `${prefix}${stream}.log`), capBytes + 1);
  const room = capBytes + 1 - (current?.data.length ?? 0);
  const rotated = room > 0 ? await readLastBytes(join(dir, `${prefix}${stream}.log.1`), room) : null;
  if (!current && !rotated) return { text: '', sourceBytes: 0, omittedBytes: 0, source: 'none' };
  const sourceBytes = (current?.size ?? 0) + (rotated?.size ?? 0);
  const joined = Buffer.concat([rotated?.data ?? Buffer.alloc(0), current?.data ?? Buffer.alloc(0)]);
  const cut = tailBytes(joined, capBytes);
  return { text: cut.text, sourceBytes, omittedBytes: sourceBytes - Buffer.byteLength(cut.text), source: 'file' };
}

/** Caps an in-memory tail the same way. */
export function capMemoryTail(text: string, capBytes: number): LogTail {
  const buffer = Buffer.from(text, 'utf8');
  const cut = tailBytes(buffer, capBytes);
  return { text: cut.text, sourceBytes: buffer.length, omittedBytes: cut.omittedBytes, source: 'memory' };
}

/** Instance ids that have a log directory, most recently written first. */
export async function listLogDirs(dataDir: string): Promise<string[]> {
  const root = join(dataDir, 'logs');
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const dated = await Promise.all(
    names.map(async (name) => {
      try {
        const info = await stat(join(root, name));
        return info.isDirectory() ? { name, mtimeMs: info.mtimeMs } : null;
      } catch {
        return null;
      }
    }),
  );
  return dated
    .filter((d): d is { name: string; mtimeMs: number } => d !== null)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .map((d) => d.name);
}

/** A zip-safe path segment for an instance id (no separators, no "..", nothing odd). */
export function safeSegment(id: string): string {
  const cleaned = id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return cleaned === '' ? '_' : cleaned.slice(0, 120);
}
