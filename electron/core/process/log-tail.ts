/**
 * A runner's output kept two ways: a bounded in-memory tail (for the snapshot, crash
 * diagnostics and the bundle) and a size-capped file in the data directory. When the
 * file reaches its cap it is rotated once to `<name>.1`, so disk use stays at most
 * twice the cap however long the runner lives.
 */
import { createWriteStream, mkdirSync, openSync, renameSync, statSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';

export interface LogTailOptions {
  /** Characters kept in memory. */
  memoryChars?: number;
  /** Bytes per log file before rotation; null keeps no file. */
  filePath?: string | null;
  fileCapBytes?: number;
}

export class LogTail {
  private chunks: string[] = [];
  private chars = 0;
  private file: WriteStream | null = null;
  private fileBytes = 0;
  private readonly memoryChars: number;
  private readonly fileCapBytes: number;

  constructor(private readonly options: LogTailOptions = {}) {
    this.memoryChars = options.memoryChars ?? 256 * 1024;
    this.fileCapBytes = options.fileCapBytes ?? 5 * 1024 * 1024;
    if (options.filePath) this.openFile(options.filePath);
  }

  append(text: string): void {
    this.chunks.push(text);
    this.chars += text.length;
    while (this.chars > this.memoryChars && this.chunks.length > 1) {
      this.chars -= this.chunks.shift()!.length;
    }
    if (this.file) {
      const bytes = Buffer.byteLength(text);
      if (this.fileBytes + bytes > this.fileCapBytes) this.rotate();
      this.file?.write(text);
      this.fileBytes += bytes;
    }
  }

  /** The most recent output, at most `maxChars` characters. */
  tail(maxChars = this.memoryChars): string {
    const all = this.chunks.join('');
    return all.length > maxChars ? all.slice(all.length - maxChars) : all;
  }

  close(): Promise<void> {
    const file = this.file;
    this.file = null;
    if (!file) return Promise.resolve();
    return new Promise((resolve) => file.end(resolve));
  }

  private openFile(path: string): void {
    mkdirSync(dirname(path), { recursive: true });
    try {
      this.fileBytes = statSync(path).size;
    } catch {
      this.fileBytes = 0;
    }
    this.attach(path, 'a');
  }

  private rotate(): void {
    const path = this.options.filePath;
    if (!path || !this.file) return;
    this.file.end();
    try {
      renameSync(path, `${path}.1`);
    } catch {
      // Nothing to rotate: start the file anew all the same.
    }
    this.fileBytes = 0;
    this.attach(path, 'w');
  }

  private attach(path: string, flags: 'a' | 'w'): void {
    const stream = openStream(path, flags);
    this.file = stream;
    stream?.on('error', () => {
      // A full disk must not take the runner down: keep the in-memory tail only.
      if (this.file === stream) this.file = null;
    });
  }
}

/**
 * A write stream on a file opened now, not on the next tick: a rotation right after
 * (a burst of output) then renames a file that exists, and the old stream's pending
 * writes follow its descriptor into `<name>.1` instead of racing the new file.
 * Null when the file cannot be opened.
 */
function openStream(path: string, flags: 'a' | 'w'): WriteStream | null {
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch {
    return null;
  }
  return createWriteStream(path, { fd });
}
