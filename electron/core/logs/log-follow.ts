/**
 * Reading a log source: its last lines, then each new line as it is written. The file is
 * read every POLL_MS (a line shows within that); a rotated or truncated file is read from
 * its start again; a file that goes away keeps the follower waiting for it to come back.
 * The API's server-sent events and the app's IPC both follow a log through this.
 */
import { open } from 'node:fs/promises';
import { readLastBytes } from '../diagnostics/log-tails';
import type { LogSource } from './log-sources';

/** How often a followed file is read for new lines. */
export const POLL_MS = 200;
/** The most of a file's end read for its last lines. */
const TAIL_BYTES = 1024 * 1024;

/** The last `count` complete lines of `text`. */
export function lastLines(text: string, count: number): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return count === 0 ? [] : lines.slice(-count);
}

export interface LogTailRead {
  /** The last complete lines, oldest first. */
  lines: string[];
  /** The byte where following starts: after the last complete line. */
  offset: number;
}

/** The last `count` complete lines of `path` (an unfinished last line is left to the follower). */
export async function readTail(path: string, count: number): Promise<LogTailRead> {
  const tail = await readLastBytes(path, TAIL_BYTES);
  const text = tail ? tail.data.toString('utf8') : '';
  // A cut tail starts mid-line: that first piece is not a line.
  const complete = tail && tail.size > tail.data.length ? text.slice(text.indexOf('\n') + 1) : text;
  // A last line still being written is not a line yet: following sends it once it ends.
  const unfinished = complete.endsWith('\n') ? '' : complete.slice(complete.lastIndexOf('\n') + 1);
  const lines = lastLines(complete.slice(0, complete.length - unfinished.length), count);
  return { lines, offset: (tail?.size ?? 0) - Buffer.byteLength(unfinished) };
}

/**
 * Calls `onLines` with each batch of lines added to `path` after byte `startAt`, until
 * the returned function is called.
 */
export function followFile(path: string, startAt: number, onLines: (lines: string[]) => void, pollMs = POLL_MS): () => void {
  let offset = startAt;
  let partial = '';
  let reading = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (reading || stopped) return;
    reading = true;
    void (async () => {
      try {
        const handle = await open(path, 'r');
        try {
          const { size } = await handle.stat();
          if (size < offset) {
            offset = 0; // rotated or truncated: its new content from the start
            partial = '';
          }
          if (size > offset) {
            const buffer = Buffer.alloc(size - offset);
            await handle.read(buffer, 0, buffer.length, offset);
            offset = size;
            const parts = (partial + buffer.toString('utf8')).split('\n');
            partial = parts.pop() ?? '';
            if (parts.length > 0 && !stopped) onLines(parts);
          }
        } finally {
          await handle.close();
        }
      } catch {
        // The file went away (its instance was deleted): keep following, it may come back.
      } finally {
        reading = false;
      }
    })();
  }, pollMs);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** A source's last `count` lines, then its new lines as they come (see {@link followFile}). */
export async function followSource(source: LogSource, count: number, onLines: (lines: string[]) => void): Promise<{ lines: string[]; stop: () => void }> {
  const tail = await readTail(source.path, count);
  return { lines: tail.lines, stop: followFile(source.path, tail.offset, onLines) };
}
