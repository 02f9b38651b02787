/**
 * OpenAI Responses as exo 0.3.70 serves it (`POST /v1/responses`, src/exo/api/adapters/responses.py,
 * types in src/exo/api/types/openai_responses.py), for the proxy:
 * - what goes to exo: only `ResponsesRequest`'s fields (model, input, instructions,
 *   max_output_tokens, temperature, top_p, stream, tools, metadata, reasoning and exo's
 *   enable_thinking, top_k, stop, seed); its internal `chat_template_messages` and anything else
 *   are dropped and named, as for chat (exo-declared-fields.ts). The input items are a union of
 *   some twenty item types exo reads each in its own way: they go as sent;
 * - the stream: `event:`/`data:` pairs, each with a `sequence_number`; `response.created` names
 *   the response `resp_<command id>` (the record takes exo's command id from it, so a cancel
 *   reaches exo at once); each `response.output_text.delta`, each reasoning summary delta and
 *   each function_call `response.output_item.added` (exo sends a call whole) is output;
 *   `response.completed` carries the usage and is the stream's end. No prefill progress (the
 *   adapter skips it);
 * - exobar's own endings as exobar's local Responses route ends them: a cancel is
 *   `response.incomplete` (`incomplete_details.reason: "cancelled"`), a fault an `error` event.
 */
import { JsonLineTap, sseData } from './json-line-tap';
import type { ApiError } from '../../api/api-error';
import type { RouteContext } from '../../api/route-types';
import type { ExoDialect } from './exo-dialect';
import type { ExoBody } from './exo-declared-fields';
import type { ProxiedRequest } from './exo-traffic';
import type { SseTapEvents } from './sse-tap';

/** `ResponsesRequest`'s fields (its internal `chat_template_messages` left out: a client never sets it). */
export const EXO_RESPONSES_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'input',
  'instructions',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'tools',
  'metadata',
  'reasoning',
  'enable_thinking',
  'top_k',
  'stop',
  'seed',
]);

/** exo's Responses id for a command: `resp_<command id>`. */
export const RESPONSE_ID_PREFIX = 'resp_';

/** The command id inside a Responses id (the id itself when it is not one). */
export const commandIdOfResponse = (id: string): string => (id.startsWith(RESPONSE_ID_PREFIX) ? id.slice(RESPONSE_ID_PREFIX.length) : id);

export function toExoResponsesBody(input: Record<string, unknown>): ExoBody {
  const body: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    // keep_alive is exobar's own (exo-declared-fields.ts): read by exobar, never exo's.
    if (key === 'keep_alive') continue;
    if (EXO_RESPONSES_FIELDS.has(key)) body[key] = value;
    else dropped.push(key);
  }
  return { body, dropped };
}

/** A `data:` line of exo's Responses stream; every field is checked before use. */
interface EventData {
  type?: unknown;
  response?: { id?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown } | null } | null;
  item?: { type?: unknown } | null;
  message?: unknown;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Reads exo's Responses stream as it passes through (the bytes go to the client first). */
export class ResponsesTap extends JsonLineTap {
  constructor(private readonly events: SseTapEvents) {
    super();
  }

  protected payloadOf(line: string): string | null {
    return sseData(line);
  }

  protected read(object: object): void {
    const json = object as EventData;
    switch (json.type) {
      case 'response.created':
        if (typeof json.response?.id === 'string') this.events.token(commandIdOfResponse(json.response.id), false);
        break;
      case 'response.output_text.delta':
      case 'response.reasoning_summary_text.delta':
        this.events.token(null, true);
        break;
      case 'response.output_item.added':
        // A function call comes whole (exo's parser); a message item opens just before its first delta.
        if (json.item?.type === 'function_call') this.events.token(null, true);
        break;
      case 'response.completed':
        this.events.usage(num(json.response?.usage?.input_tokens), num(json.response?.usage?.output_tokens));
        this.events.done();
        break;
      case 'error':
        this.events.error(typeof json.message === 'string' ? json.message : 'exo sent an error without a message');
        break;
      default:
    }
  }
}

const sse = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

const cancelledResponse = (record: ProxiedRequest) => ({
  id: `${RESPONSE_ID_PREFIX}${record.commandId ?? record.id}`,
  object: 'response',
  created_at: Math.floor(Date.now() / 1000),
  status: 'incomplete',
  incomplete_details: { reason: 'cancelled' },
  model: record.model,
  output: [] as unknown[],
  output_text: '',
});

// exobar's own events come after exo's: their sequence number is not exo's count, so 0 marks them as exobar's.
const cancelledEnding = (record: ProxiedRequest): string => sse('response.incomplete', { sequence_number: 0, response: cancelledResponse(record) });

function answerCancelled(ctx: RouteContext, record: ProxiedRequest, stream: boolean): void {
  if (ctx.res.destroyed || ctx.res.headersSent) return;
  if (!stream) return ctx.json(200, cancelledResponse(record));
  ctx.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  ctx.res.end(
    sse('response.created', { sequence_number: 0, response: { ...cancelledResponse(record), status: 'in_progress', incomplete_details: null } }) +
      cancelledEnding(record),
  );
}

/** OpenAI Responses on exo. */
export const RESPONSES_DIALECT: ExoDialect = {
  api: 'openai-responses',
  path: '/v1/responses',
  toExoBody: toExoResponsesBody,
  tap: (events) => new ResponsesTap(events),
  cancelledStreamEnding: cancelledEnding,
  streamError: (error: ApiError) => sse('error', { sequence_number: 0, code: error.code, message: error.message, param: null }),
  answerCancelled,
  whole(json) {
    const j = json as { id?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown } | null } | null;
    return {
      commandId: typeof j?.id === 'string' ? commandIdOfResponse(j.id) : null,
      promptTokens: num(j?.usage?.input_tokens),
      completionTokens: num(j?.usage?.output_tokens),
    };
  },
};
