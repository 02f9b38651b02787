/**
 * Stop sequences as OpenAI applies them: generation ends at the first occurrence of any
 * stop string, and that string (and anything after it) is not part of the answer.
 *
 * Text is streamed token by token, so a stop string can span tokens: text that could be
 * the start of a stop string is held back until the next token tells whether it is one.
 * A runner feeds every generated token through {@link StopSequenceMatcher.push} and emits
 * only what it returns; at a natural end it emits {@link StopSequenceMatcher.flush}.
 */

/** OpenAI accepts at most this many stop sequences. */
export const MAX_STOP_SEQUENCES = 4;

export interface StopStep {
  /** Text that can be emitted now (possibly empty while a partial match is held). */
  text: string;
  /** True once a stop sequence was found: generation must end, with finish reason "stop". */
  stopped: boolean;
  /** The stop sequence found (the earliest in the text; of two at one place, the first listed); null while none is. */
  matched: string | null;
}

export class StopSequenceMatcher {
  private held = '';
  private done = false;
  private matched: string | null = null;
  private readonly stops: readonly string[];

  constructor(stops: readonly string[]) {
    // An empty string would match everywhere; the API refuses it, this guards the runner.
    this.stops = stops.filter((s) => s.length > 0);
  }

  /** True when there is nothing to look for (no stop sequences). */
  get isEmpty(): boolean {
    return this.stops.length === 0;
  }

  /** Feeds the next token's text; returns what may be emitted and whether to stop. */
  push(text: string): StopStep {
    if (this.done) return { text: '', stopped: true, matched: this.matched };
    const buffer = this.held + text;
    // Emitted text never holds a stop string nor a held-back prefix of one, so the first
    // occurrence in the buffer is the first in the whole answer.
    let cut = -1;
    for (const stop of this.stops) {
      const at = buffer.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.matched = stop;
      }
    }
    if (cut >= 0) {
      this.held = '';
      this.done = true;
      return { text: buffer.slice(0, cut), stopped: true, matched: this.matched };
    }
    const keep = this.partialMatchLength(buffer);
    this.held = buffer.slice(buffer.length - keep);
    return { text: buffer.slice(0, buffer.length - keep), stopped: false, matched: null };
  }

  /** The text held back at the end of generation (it turned out not to be a stop string). */
  flush(): string {
    const text = this.held;
    this.held = '';
    return text;
  }

  /** Length of the longest end of `buffer` that is the start of some stop string. */
  private partialMatchLength(buffer: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, buffer.length); n > longest; n--) {
        if (buffer.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
