/**
 * A server-sent events response: `data:` messages, `:` comment lines (exo's
 * `: prefill_progress {...}` and keep-alives), and a clean end.
 */
import type { ServerResponse } from 'node:http';

/** Keep-alive comment interval: well under the idle timeouts of proxies and HTTP clients. */
export const SSE_KEEPALIVE_MS = 15_000;

export class SseStream {
  private keepAlive: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly res: ServerResponse) {}

  /** Sends the status and headers; call once, before anything else. */
  open(keepAliveMs = SSE_KEEPALIVE_MS): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Tell buffering reverse proxies (nginx) to pass events through at once.
      'X-Accel-Buffering': 'no',
    });
    // Headers go out now, so the client sees the stream open before the first event.
    this.res.flushHeaders();
    this.res.on('close', () => this.stopKeepAlive());
    if (keepAliveMs > 0) {
      this.keepAlive = setInterval(() => this.comment('keep-alive'), keepAliveMs);
      this.keepAlive.unref();
    }
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed || this.res.writableEnded;
  }

  /** One `data:` message holding `payload` (a string is sent as is, e.g. "[DONE]"). */
  data(payload: unknown): void {
    if (this.isClosed) return;
    const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
    this.res.write(`data: ${text}\n\n`);
  }

  /** A named event (`event: name`) with a JSON payload. */
  event(name: string, payload: unknown): void {
    if (this.isClosed) return;
    this.res.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  /** A comment line, ignored by SSE parsers that do not look for it (exo's progress lines). */
  comment(text: string): void {
    if (this.isClosed) return;
    this.res.write(`: ${text.replace(/[\r\n]+/g, ' ')}\n\n`);
  }

  end(): void {
    this.stopKeepAlive();
    if (this.closed) return;
    this.closed = true;
    if (!this.res.writableEnded) this.res.end();
  }

  private stopKeepAlive(): void {
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.keepAlive = null;
  }
}
