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

const UsageSchema = z.looseObject({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() });

const ErrorDataSchema = z.looseObject({ error: z.looseObject({ message: z.string().optional() }) });

const DataSchema = z.looseObject({
    id: z.string().optional(),
    choices: z.array(z.looseObject({ delta: z.looseObject({ content: z.string().nullish(), reasoning_content: z.string().nullish() }).optional() })).optional(),
    usage: UsageSchema.nullish(),
  });

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
      const json = parseJson(payload);
      const failure = ErrorDataSchema.safeParse(json);
      if (failure.success) return this.events.error(failure.data.error.message ?? 'exo sent an error without a message');
      const parsed = DataSchema.safeParse(json);
      if (!parsed.success) {
        this.unreadable++;
        return;
      }
      const data = parsed.data;
      const delta = data.choices?.[0]?.delta;
      const hasContent = Boolean(delta?.content || delta?.reasoning_content);
      this.events.token(data.id ?? null, hasContent);
      if (data.usage) this.events.usage(data.usage.prompt_tokens ?? null, data.usage.completion_tokens ?? null);
    }
  }
}
