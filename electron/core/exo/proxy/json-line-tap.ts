/**
 * The line reading every exo stream tap shares: chunks cut into lines (a partial line
 * kept for the next chunk, one over 1 MiB dropped as unreadable), each line's JSON payload
 * parsed, and what is not JSON counted as unreadable. A dialect's tap says which lines
 * carry a payload (SSE `data:` lines, or every NDJSON line) and what each payload means.
 */
import type { StreamTap } from './exo-dialect';

/** A tap over exo's stream lines; the subclass reads each JSON payload. */
export abstract class JsonLineTap implements StreamTap {
  unreadable = 0;
  private rest = '';

  feed(chunk: Buffer): void {
    const lines = (this.rest + chunk.toString('utf8')).split('\n');
    this.rest = lines.pop() ?? '';
    if (this.rest.length > 1024 * 1024) {
      this.rest = '';
      this.unreadable++;
    }
    for (const raw of lines) {
      const payload = this.payloadOf(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
      if (payload !== null) this.parse(payload);
    }
  }

  /** The line's JSON text, or null for a line that carries none (a comment, an event name, a blank). */
  protected abstract payloadOf(line: string): string | null;

  /** One payload that parsed to a JSON object. */
  protected abstract read(json: object): void;

  private parse(payload: string): void {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      this.unreadable++;
      return;
    }
    if (json === null || typeof json !== 'object') return void this.unreadable++;
    this.read(json);
  }
}

/** The payload of an SSE `data:` line; `event:` names repeat the data's `type`, and comments are keep-alives. */
export function sseData(line: string): string | null {
  return line.startsWith('data:') ? line.slice(5).trimStart() : null;
}
