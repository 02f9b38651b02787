/**
 * Reads an SSE response line by line as it arrives, with the time of each line, for
 * tests that measure time to first token or look at comments OpenAI clients skip.
 */
export interface TimedLine {
  at: number;
  line: string;
}

/** All non-empty lines of `response`'s body, each stamped with performance.now() on arrival. */
export async function readTimedLines(response: Response, onLine?: (line: TimedLine) => void): Promise<TimedLine[]> {
  const lines: TimedLine[] = [];
  const decoder = new TextDecoder();
  let rest = '';
  const reader = response.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      if (line === '') continue;
      const timed = { at: performance.now(), line };
      lines.push(timed);
      onLine?.(timed);
    }
  }
  return lines;
}

/** Milliseconds from `start` to the first `data:` line holding a token (not [DONE], not an error). */
export function firstTokenMs(lines: TimedLine[], start: number): number | null {
  const first = lines.find((l) => l.line.startsWith('data: {') && l.line.includes('"choices"'));
  return first ? first.at - start : null;
}
