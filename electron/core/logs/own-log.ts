/**
 * exobar's own log as a file the page can follow: every record of the core's logger
 * (the API's requests, settings, exo's progress, warnings), as pino's JSON lines, in
 * `<dataDir>/exobar.log`, rotated once to `exobar.log.1` at 5 MiB so disk use stays at
 * most twice that. The terminal (or the app's main.log) keeps its own format; this file
 * is written beside it through pino's multistream.
 */
import { join } from 'node:path';
import pino, { type DestinationStream, type Level } from 'pino';
import { LogTail } from '../process/log-tail';

/** Bytes of the file before it is rotated. */
export const OWN_LOG_CAP_BYTES = 5 * 1024 * 1024;

/** Where exobar writes its own log in a data directory. */
export function ownLogPath(dataDir: string): string {
  return join(dataDir, 'exobar.log');
}

/** A pino destination appending each record to `path`, rotated at the cap. */
export function ownLogDestination(path: string, capBytes = OWN_LOG_CAP_BYTES): DestinationStream {
  // Nothing kept in memory: the file is the log (LogTail keeps at least its last chunk).
  const tail = new LogTail({ filePath: path, fileCapBytes: capBytes, memoryChars: 1 });
  return { write: (line: string) => tail.append(line) };
}

/**
 * One destination writing to `main` and, at the same level, to exobar's own log file;
 * `main` alone when there is no file to write.
 */
export function withOwnLog(main: DestinationStream, level: string, ownLog: string | null | undefined): DestinationStream {
  if (!ownLog || level === 'silent') return main;
  const at = level as Level;
  return pino.multistream([
    { stream: main, level: at },
    { stream: ownLogDestination(ownLog), level: at },
  ]);
}
