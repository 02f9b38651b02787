/**
 * Everything exo prints, kept (exo's own app sends it to /dev/null): each stream to a
 * size-capped file in exobar's data directory, `<dataDir>/exo/exo-stdout.log` and
 * `exo-stderr.log`, rotated once to `<name>.1` at the cap (process/log-tail.ts), a
 * bounded in-memory tail of each, and the last lines of both for the state. The
 * diagnostic bundle takes redacted tails through {@link ExoLogs.diagnosticTails}.
 */
import { join } from 'node:path';
import { EXO_LAST_LINES_MAX } from '../../../shared/exo-process';
import { capMemoryTail, truncationMarker } from '../diagnostics/log-tails';
import type { Redactor } from '../diagnostics/redaction';
import { LineSplitter } from '../process/line-splitter';
import { LogTail } from '../process/log-tail';

export type ExoStream = 'stdout' | 'stderr';

export interface ExoLogsOptions {
  /** Bytes per file before rotation (default 5 MiB; at most twice this on disk per stream). */
  fileCapBytes?: number;
  /** Characters of each stream kept in memory (default 256 KiB). */
  memoryChars?: number;
}

/** One exo log as the diagnostic bundle stores it. */
export interface ExoLogBundleFile {
  /** Path inside the bundle, e.g. `exo/exo-stderr.log`. */
  name: string;
  text: string;
  /** Bytes left out at the start (the marker says so too). */
  omittedBytes: number;
}

/** The longest line kept in `lastLines` (a line of JSON state could be megabytes). */
const LINE_CHARS = 500;

/** The directory of exo's logs in exobar's data directory. */
export function exoLogDir(dataDir: string): string {
  return join(dataDir, 'exo');
}

export class ExoLogs {
  private readonly tails: Record<ExoStream, LogTail>;
  private readonly splitters: Record<ExoStream, LineSplitter>;
  private readonly recent: string[] = [];
  private lineListener: (line: string, stream: ExoStream) => void = () => undefined;

  constructor(dataDir: string, options: ExoLogsOptions = {}) {
    const dir = exoLogDir(dataDir);
    const tail = (stream: ExoStream): LogTail =>
      new LogTail({ filePath: join(dir, `exo-${stream}.log`), fileCapBytes: options.fileCapBytes ?? 5 * 1024 * 1024, memoryChars: options.memoryChars });
    this.tails = { stdout: tail('stdout'), stderr: tail('stderr') };
    const splitter = (stream: ExoStream): LineSplitter =>
      new LineSplitter(
        (line) => this.addLine(line, stream),
        (bytes) => this.addLine(`[exobar] a line of ${bytes} bytes was cut`, stream),
        64 * 1024,
      );
    this.splitters = { stdout: splitter('stdout'), stderr: splitter('stderr') };
  }

  /** Called for every complete line exo prints (the manager reads failures and the fast-synch line). */
  onLine(listener: (line: string, stream: ExoStream) => void): void {
    this.lineListener = listener;
  }

  /** Appends a chunk of exo's output. */
  append(stream: ExoStream, chunk: string): void {
    this.tails[stream].append(chunk);
    this.splitters[stream].push(chunk);
  }

  /** Ends a stream's unterminated last line (exo exited). */
  flush(stream: ExoStream): void {
    this.splitters[stream].flush();
  }

  /** exobar's own note in exo's stderr log ("[exobar] starting: exo --api-port ..."), so the file tells the whole story. */
  note(text: string): void {
    this.tails.stderr.append(`[exobar ${new Date().toISOString()}] ${text}\n`);
  }

  /** The last lines of both streams, oldest first, at most EXO_LAST_LINES_MAX. */
  lastLines(): string[] {
    return [...this.recent];
  }

  /** Forgets the last lines (a new start), keeping the files and tails. */
  clearLastLines(): void {
    this.recent.length = 0;
  }

  /** Redacted tails of both streams for the diagnostic bundle, each at most `capBytes`. */
  diagnosticTails(redactor: Redactor, capBytes = 512 * 1024): ExoLogBundleFile[] {
    return (['stdout', 'stderr'] as const).map((stream) => {
      const tail = capMemoryTail(this.tails[stream].tail(), capBytes);
      const text = redactor.text(tail.text);
      return {
        name: `exo/exo-${stream}.log`,
        text: tail.omittedBytes > 0 ? truncationMarker(tail.omittedBytes) + text : text,
        omittedBytes: tail.omittedBytes,
      };
    });
  }

  close(): Promise<void> {
    return Promise.all([this.tails.stdout.close(), this.tails.stderr.close()]).then(() => undefined);
  }

  private addLine(line: string, stream: ExoStream): void {
    if (line.trim() === '') return;
    this.recent.push(line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line);
    if (this.recent.length > EXO_LAST_LINES_MAX) this.recent.shift();
    this.lineListener(line, stream);
  }
}
