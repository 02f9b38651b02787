/**
 * Ollama's chat and generate as exo 0.3.70 serves them (`POST /ollama/api/chat`,
 * `/ollama/api/generate`, src/exo/api/adapters/ollama.py, types in src/exo/api/types/ollama_api.py),
 * for the proxy of exobar's own `/api/chat` and `/api/generate`:
 * - what goes to exo: only `OllamaChatRequest`'s fields (model, messages, stream, options, tools,
 *   format, think) or `OllamaGenerateRequest`'s (model, prompt, system, stream, options, format,
 *   think, raw, images), per message `OllamaMessage`'s (role, content, thinking, tool_calls, name,
 *   tool_name, images) and in `options` `OllamaOptions`' (num_predict, temperature, top_p, top_k,
 *   stop, seed); `keep_alive` is exobar's own (exo declares it and reads nothing of it); the rest is
 *   dropped and named, as for chat (exo-declared-fields.ts);
 * - the stream: NDJSON, one object per line; a line with text (`message.content`,
 *   `message.thinking`, `response`) or tool calls is output; the `done: true` line carries
 *   `prompt_eval_count`/`eval_count` and is the stream's end, `done_reason: "error"` exo's error.
 *   No line names exo's command id: the record takes it from exo's task list (exo-traffic.ts), and
 *   no prefill progress comes;
 * - exobar's own endings as exobar's local Ollama routes end them: a cancel is a last `done: true`
 *   line with `done_reason: "cancelled"`, a fault a line `{"error": "…"}` as Ollama's server writes one.
 */
import { JsonLineTap } from './json-line-tap';
import type { ApiError } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import type { ExoDialect, WholeFigures } from './exo-dialect';
import type { ExoBody } from './exo-declared-fields';
import type { ProxiedRequest } from './exo-traffic';
import type { SseTapEvents } from './sse-tap';

/** `OllamaChatRequest`'s fields (keep_alive aside: exobar's). */
export const EXO_OLLAMA_CHAT_FIELDS: ReadonlySet<string> = new Set(['model', 'messages', 'stream', 'options', 'tools', 'format', 'think']);
/** `OllamaGenerateRequest`'s fields (keep_alive aside: exobar's). */
export const EXO_OLLAMA_GENERATE_FIELDS: ReadonlySet<string> = new Set(['model', 'prompt', 'system', 'stream', 'options', 'format', 'think', 'raw', 'images']);
/** `OllamaMessage`'s fields. */
export const EXO_OLLAMA_MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content', 'thinking', 'tool_calls', 'name', 'tool_name', 'images']);
/** `OllamaOptions`' fields. */
export const EXO_OLLAMA_OPTIONS: ReadonlySet<string> = new Set(['num_predict', 'temperature', 'top_p', 'top_k', 'stop', 'seed']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function keepOnly(input: Record<string, unknown>, fields: ReadonlySet<string>, dropped: string[], prefix: string): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (fields.has(key)) kept[key] = value;
    else dropped.push(`${prefix}${key}`);
  }
  return kept;
}

function toExoOllamaBody(fields: ReadonlySet<string>) {
  return (input: Record<string, unknown>): ExoBody => {
    const dropped: string[] = [];
    const { keep_alive: _exobars, ...rest } = input;
    const body = keepOnly(rest, fields, dropped, '');
    if (isObject(body.options)) body.options = keepOnly(body.options, EXO_OLLAMA_OPTIONS, dropped, 'options.');
    if (Array.isArray(body.messages))
      body.messages = body.messages.map((m: unknown, i) => (isObject(m) ? keepOnly(m, EXO_OLLAMA_MESSAGE_FIELDS, dropped, `messages[${i}].`) : m));
    return { body, dropped };
  };
}

/** A line of exo's Ollama stream; every field is checked before use. */
interface Line {
  done?: unknown;
  done_reason?: unknown;
  response?: unknown;
  message?: { content?: unknown; thinking?: unknown; tool_calls?: unknown } | null;
  prompt_eval_count?: unknown;
  eval_count?: unknown;
  error?: unknown;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const said = (v: unknown) => typeof v === 'string' && v.length > 0;

/** Reads exo's NDJSON stream as it passes through (the bytes go to the client first). */
export class OllamaTap extends JsonLineTap {
  constructor(private readonly events: SseTapEvents) {
    super();
  }

  protected payloadOf(line: string): string | null {
    return line.trim() ? line : null;
  }

  protected read(object: object): void {
    const json = object as Line;
    if (Array.isArray(json)) return void this.unreadable++;
    if (typeof json.error === 'string') return this.events.error(json.error);
    const m = json.message;
    if (said(json.response) || said(m?.content) || said(m?.thinking) || (Array.isArray(m?.tool_calls) && m.tool_calls.length > 0))
      this.events.token(null, true);
    if (json.done !== true) return;
    if (json.done_reason === 'error') return this.events.error(said(m?.content) ? String(m!.content) : 'exo reported an error');
    this.events.usage(num(json.prompt_eval_count), num(json.eval_count));
    this.events.done();
  }
}

function dialect(kind: 'chat' | 'generate'): ExoDialect {
  const ending = (record: ProxiedRequest) => {
    const base = { model: record.model, created_at: new Date().toISOString(), done: true, done_reason: 'cancelled' };
    return kind === 'chat' ? { ...base, message: { role: 'assistant', content: '' } } : { ...base, response: '' };
  };
  return {
    api: kind === 'chat' ? 'ollama-chat' : 'ollama-generate',
    path: `/ollama/api/${kind}`,
    streamContentType: 'application/x-ndjson',
    toExoBody: toExoOllamaBody(kind === 'chat' ? EXO_OLLAMA_CHAT_FIELDS : EXO_OLLAMA_GENERATE_FIELDS),
    tap: (events) => new OllamaTap(events),
    cancelledStreamEnding: (record) => `${JSON.stringify(ending(record))}\n`,
    streamError: (error: ApiError) => `${JSON.stringify({ error: error.message })}\n`,
    answerCancelled(ctx: RouteContext, record: ProxiedRequest, stream: boolean) {
      if (ctx.res.destroyed || ctx.res.headersSent) return;
      if (!stream) return ctx.json(200, ending(record));
      ctx.res.writeHead(200, { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-cache' });
      ctx.res.end(`${JSON.stringify(ending(record))}\n`);
    },
    whole(json): WholeFigures {
      const j = json as Line | null;
      return { commandId: null, promptTokens: num(j?.prompt_eval_count), completionTokens: num(j?.eval_count) };
    },
  };
}

/** Ollama chat on exo. */
export const OLLAMA_CHAT_DIALECT = dialect('chat');
/** Ollama generate on exo. */
export const OLLAMA_GENERATE_DIALECT = dialect('generate');
