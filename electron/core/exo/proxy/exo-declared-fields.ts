/**
 * The chat-completions body exobar sends to exo carries only the fields exo declares
 * (exo 0.3.70, src/exo/api/types/api.py: `ChatCompletionRequest` and, per message,
 * `ChatCompletionMessage`). exo's pydantic models ignore unknown fields today, and exo
 * is moving to reject them: a field exo does not read is dropped here, and named in the
 * answer's `x-exobar-dropped-fields` header, rather than sent for exo to ignore or to
 * refuse. OpenAI's newer name for the output limit, `max_completion_tokens`, which exo
 * does not declare, goes as exo's `max_tokens` (the limit the client asked for holds).
 */

/** `ChatCompletionRequest`'s fields. */
export const EXO_CHAT_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'frequency_penalty',
  'messages',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'max_tokens',
  'n',
  'presence_penalty',
  'response_format',
  'seed',
  'stop',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'reasoning_effort',
  'enable_thinking',
  'min_p',
  'repetition_penalty',
  'repetition_context_size',
  'tool_choice',
  'parallel_tool_calls',
  'user',
]);

/** `ChatCompletionMessage`'s fields. */
export const EXO_MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content', 'reasoning_content', 'name', 'tool_calls', 'tool_call_id', 'function_call']);

/** exobar's own fields: read by exobar (keep_alive: how long a model placed on demand stays), never exo's. */
const EXOBAR_FIELDS: ReadonlySet<string> = new Set(['keep_alive']);

export interface ExoBody {
  /** What goes to exo. */
  body: Record<string, unknown>;
  /** The fields left out that exobar does not read either, as paths (`metadata`, `messages[0].cache_control`). */
  dropped: string[];
}

/** The body with only exo's declared fields (top level and each message); `max_completion_tokens` as `max_tokens`. */
export function toExoChatBody(input: Record<string, unknown>): ExoBody {
  const body: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (key === 'max_completion_tokens' || EXOBAR_FIELDS.has(key)) continue;
    if (EXO_CHAT_FIELDS.has(key)) body[key] = value;
    else dropped.push(key);
  }
  const limit = input.max_completion_tokens;
  if (limit !== undefined && limit !== null && (body.max_tokens === undefined || body.max_tokens === null)) body.max_tokens = limit;
  if (Array.isArray(input.messages)) {
    body.messages = input.messages.map((message: unknown, i) => {
      if (message === null || typeof message !== 'object' || Array.isArray(message)) return message;
      const kept: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(message)) {
        if (EXO_MESSAGE_FIELDS.has(key)) kept[key] = value;
        else dropped.push(`messages[${i}].${key}`);
      }
      return kept;
    });
  }
  return { body, dropped };
}
