/**
 * Splits a byte stream into lines for the JSON-lines runner protocol. A line longer
 * than `maxLineBytes` is cut off and reported as oversized instead of growing memory
 * without bound: a runner printing garbage must never take the node down.
 */
export class LineSplitter {
  private buffer = '';
  private discarding = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onOversized: (bytes: number) => void,
    private readonly maxLineBytes = 4 * 1024 * 1024,
  ) {}

  push(chunk: string): void {
    let start = 0;
    for (let newline = chunk.indexOf('\n', start); newline !== -1; newline = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, newline);
      start = newline + 1;
      if (this.discarding) {
        this.discarding = false;
        this.buffer = '';
        continue;
      }
      const line = this.buffer + piece;
      this.buffer = '';
      this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    if (start < chunk.length && !this.discarding) {
      this.buffer += chunk.slice(start);
      if (this.buffer.length > this.maxLineBytes) {
        this.onOversized(this.buffer.length);
        this.buffer = '';
        this.discarding = true;
      }
    }
  }

  /** The unterminated rest, when the stream ends. */
  flush(): void {
    if (this.buffer && !this.discarding) this.onLine(this.buffer);
    this.buffer = '';
    this.discarding = false;
  }
}
