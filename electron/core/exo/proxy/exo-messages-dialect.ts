/**
 * Anthropic Messages as exo 0.3.70 serves it (`POST /v1/messages`, src/exo/api/adapters/claude.py,
 * types in src/exo/api/types/claude_api.py), for the proxy:
 * - what goes to exo: only `ClaudeMessagesRequest`'s fields (model, max_tokens, messages, system,
 *   stop_sequences, stream, temperature, top_p, top_k, tools, metadata, thinking) and, per
 *   message, `role` and `content`; the rest is dropped and named, as for chat (exo-declared-fields.ts);
 * - the stream: `event:`/`data:` pairs; `message_start` names the message `msg_<command id>`
 *   (the record takes exo's command id from it, so a cancel reaches exo at once), each
 *   `content_block_delta` and each tool_use `content_block_start` is output, `message_delta`
 *   carries the output token count, `message_stop` is the stream's end. exo's Messages stream
 *   has no prefill progress (the adapter skips it) and no usage of the prompt;
 * - exobar's own endings in Anthropic's shape: a cancel ends with `message_delta` (stop_reason
 *   null) and `message_stop`, so an SDK's stream closes cleanly with what came; a fault is an
 *   `error` event, as Anthropic's API sends one.
 */
import { JsonLineTap, sseData } from './json-line-tap';
import type { ApiError } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import type { ExoDialect } from './exo-dialect';
import type { ExoBody } from './exo-declared-fields';
import type { ProxiedRequest } from './exo-traffic';
import type { SseTapEvents } from './sse-tap';

/** `ClaudeMessagesRequest`'s fields. */
export const EXO_MESSAGES_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'metadata',
  'thinking',
]);

/** `ClaudeMessage`'s fields. */
export const EXO_CLAUDE_MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content']);

/** exo's Messages id for a command: `msg_<command id>`. */
export const MESSAGE_ID_PREFIX = 'msg_';

/** The command id inside a Messages id (the id itself when it is not one). */
export const commandIdOfMessage = (id: string): string => (id.startsWith(MESSAGE_ID_PREFIX) ? id.slice(MESSAGE_ID_PREFIX.length) : id);

export function toExoMessagesBody(input: Record<string, unknown>): ExoBody {
  const body: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    // keep_alive is exobar's own (exo-declared-fields.ts): read by exobar, never exo's.
    if (key === 'keep_alive') continue;
    if (EXO_MESSAGES_FIELDS.has(key)) body[key] = value;
    else dropped.push(key);
  }
  if (Array.isArray(input.messages)) {
    body.messages = input.messages.map((message: unknown, i) => {
      if (message === null || typeof message !== 'object' || Array.isArray(message)) return message;
      const kept: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(message)) {
        if (EXO_CLAUDE_MESSAGE_FIELDS.has(key)) kept[key] = value;
        else dropped.push(`messages[${i}].${key}`);
      }
      return kept;
    });
  }
  return { body, dropped };
}

/** A `data:` line of exo's Messages stream; every field is checked before use. */
interface EventData {
  type?: unknown;
  message?: { id?: unknown } | null;
  content_block?: { type?: unknown } | null;
  usage?: { output_tokens?: unknown } | null;
  error?: { message?: unknown } | null;
}

/** Reads exo's Messages stream as it passes through (the bytes go to the client first). */
export class MessagesTap extends JsonLineTap {
  constructor(private readonly events: SseTapEvents) {
    super();
  }

  protected payloadOf(line: string): string | null {
    return sseData(line);
  }

  protected read(object: object): void {
    const json = object as EventData;
    const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    switch (json.type) {
      case 'message_start':
        if (typeof json.message?.id === 'string') this.events.token(commandIdOfMessage(json.message.id), false);
        break;
      case 'content_block_delta':
        this.events.token(null, true);
        break;
      case 'content_block_start':
        // A tool call comes whole (exo's parser): its block is output; a text block opens before its first delta.
        if (json.content_block?.type === 'tool_use') this.events.token(null, true);
        break;
      case 'message_delta':
        this.events.usage(null, num(json.usage?.output_tokens));
        break;
      case 'message_stop':
        this.events.done();
        break;
      case 'error':
        this.events.error(typeof json.error?.message === 'string' ? json.error.message : 'exo sent an error without a message');
        break;
      default:
    }
  }
}

const sse = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

const cancelledEnding = (): string =>
  sse('message_delta', { type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 0 } }) +
  sse('message_stop', { type: 'message_stop' });

function answerCancelled(ctx: RouteContext, record: ProxiedRequest, stream: boolean): void {
  if (ctx.res.destroyed || ctx.res.headersSent) return;
  const message = {
    id: `${MESSAGE_ID_PREFIX}${record.commandId ?? record.id}`,
    type: 'message',
    role: 'assistant',
    content: [] as unknown[],
    model: record.model,
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  };
  if (!stream) return ctx.json(200, message);
  ctx.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  ctx.res.end(sse('message_start', { type: 'message_start', message }) + cancelledEnding());
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Anthropic Messages on exo. */
export const MESSAGES_DIALECT: ExoDialect = {
  api: 'anthropic-messages',
  path: '/v1/messages',
  toExoBody: toExoMessagesBody,
  tap: (events) => new MessagesTap(events),
  cancelledStreamEnding: cancelledEnding,
  streamError: (error: ApiError) => sse('error', { type: 'error', error: { type: error.code, message: error.message } }),
  answerCancelled,
  whole(json) {
    const j = json as { id?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown } } | null;
    return {
      commandId: typeof j?.id === 'string' ? commandIdOfMessage(j.id) : null,
      promptTokens: num(j?.usage?.input_tokens),
      completionTokens: num(j?.usage?.output_tokens),
    };
  },
};
