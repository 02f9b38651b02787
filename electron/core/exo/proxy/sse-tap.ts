/**
 * Reads exo's chat-completions stream as it passes through, without changing it: the
 * bytes go to the client first, then this splits them into lines and reports what
 * exobar records (`: prefill_progress`, `data:` chunks with their command id, usage,
 * errors, `: generation_stats`, `[DONE]`). A line it cannot read is counted, never fatal.
 */
import { z } from 'zod';
import { GenerationStatsSchema, type GenerationStats } from './exo-traffic';

export interface SseTapEvents {
  progress(processed: number, total: number): void;
  token(commandId: string | null, hasContent: boolean): void;
  usage(promptTokens: number | null, completionTokens: number | null): void;
  error(message: string): void;
  stats(stats: GenerationStats): void;
  done(): void;
}

const ProgressSchema = z.looseObject({
  PrefillProgressChunk: z.looseObject({ processed_tokens: z.number(), total_tokens: z.number() }),
});

/** A `data:` line as exo writes it; every field is checked before use. */
interface DataLine {
  id?: unknown;
  error?: { message?: unknown } | null;
  choices?: Array<{ delta?: { content?: unknown; reasoning_content?: unknown; tool_calls?: unknown } } | undefined>;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class SseTap {
  /** Lines that could not be read. */
  unreadable = 0;
  private rest = '';

  constructor(private readonly events: SseTapEvents) {}

  feed(chunk: Buffer): void {
    const text = this.rest + chunk.toString('utf8');
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    // A line longer than any exo writes is not a line: drop it rather than grow without bound.
    if (this.rest.length > 1024 * 1024) {
      this.rest = '';
      this.unreadable++;
    }
    for (const line of lines) this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
  }

  private line(line: string): void {
    if (line === '' || line === ': keep-alive') return;
    if (line.startsWith(': prefill_progress ')) {
      const parsed = ProgressSchema.safeParse(parseJson(line.slice(': prefill_progress '.length)));
      if (parsed.success) this.events.progress(parsed.data.PrefillProgressChunk.processed_tokens, parsed.data.PrefillProgressChunk.total_tokens);
      else this.unreadable++;
    } else if (line.startsWith(': generation_stats ')) {
      const parsed = GenerationStatsSchema.safeParse(parseJson(line.slice(': generation_stats '.length)));
      if (parsed.success) this.events.stats(parsed.data);
      else this.unreadable++;
    } else if (line.startsWith('data:')) {
      const payload = line.slice(5).trimStart();
      if (payload === '[DONE]') return this.events.done();
      // The hot path (one line per token): plain checks, no schema, nothing allocated beyond the parse.
      const json = parseJson(payload) as DataLine | undefined;
      if (!json || typeof json !== 'object') {
        this.unreadable++;
        return;
      }
      if (json.error && typeof json.error === 'object')
        return this.events.error(typeof json.error.message === 'string' ? json.error.message : 'exo sent an error without a message');
      const delta = Array.isArray(json.choices) ? json.choices[0]?.delta : undefined;
      // A tool call is output too: exo sends it whole in one chunk, the answer's first (and its TTFT).
      const hasContent = Boolean(
        delta &&
        ((typeof delta.content === 'string' ? delta.content : delta.reasoning_content) || (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)),
      );
      this.events.token(typeof json.id === 'string' ? json.id : null, hasContent);
      const usage = json.usage;
      if (usage && typeof usage === 'object') this.events.usage(num(usage.prompt_tokens), num(usage.completion_tokens));
    }
  }
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
