/**
 * The OpenAI chat-completions request, as exobar serves it: the parameters it honours,
 * validated. Parameters it ignores or refuses are sorted out before, by
 * openai-parameters.ts; this schema strips the ignored ones.
 */
import { z } from 'zod';
import type { ChatMessage } from '../../../shared/runner-protocol';
import { MAX_STOP_SEQUENCES } from '../../../shared/stop-sequences';
import type { SubmitRequest } from '../node/node-types';
import { KeepAliveSchema } from '../on-demand/keep-alive';

const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() });

// The words on the union: an error inside one branch is swallowed into zod's bare "Invalid input".
const ContentSchema = z.union([z.string(), z.array(TextPartSchema), z.null()], {
  error:
    'content must be a string or text parts ({"type":"text","text":"..."}): images and audio are not supported by this model (its runner takes text only)',
});

const OpenAiToolCallSchema = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1).max(200), arguments: z.string() }),
});

export const OpenAiMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']),
  content: ContentSchema.optional(),
  name: z.string().max(256).optional(),
  /** An assistant turn's calls, sent back by the client. */
  tool_calls: z.array(OpenAiToolCallSchema).nullable().optional(),
  /** A tool message answers this call. */
  tool_call_id: z.string().max(200).optional(),
});

const JsonSchemaObject = z.record(z.string(), z.unknown());

const OpenAiToolSchema = z.object({
  type: z.literal('function', { error: 'only function tools are supported ({"type":"function","function":{...}})' }),
  function: z.object({
    name: z.string().min(1).max(200),
    description: z.string().optional(),
    parameters: JsonSchemaObject.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const OpenAiToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1).max(200) }) }),
]);

const OpenAiResponseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: z.string().max(200).optional(),
      description: z.string().optional(),
      schema: JsonSchemaObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

export const ChatCompletionRequestSchema = z
  .object({
    model: z.string().min(1, 'model is required').max(300),
    messages: z.array(OpenAiMessageSchema).min(1, 'messages must hold at least one message').max(10_000),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
    max_tokens: z.number().int().positive().max(1_000_000).nullable().optional(),
    max_completion_tokens: z.number().int().positive().max(1_000_000).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    top_k: z.number().int().nonnegative().nullable().optional(),
    min_p: z.number().min(0).max(1).nullable().optional(),
    repetition_penalty: z.number().positive().nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    tools: z.array(OpenAiToolSchema).max(1000).nullable().optional(),
    tool_choice: OpenAiToolChoiceSchema.nullable().optional(),
    response_format: OpenAiResponseFormatSchema.nullable().optional(),
    stop: z
      .union([
        z.string().min(1, 'a stop sequence cannot be empty'),
        z.array(z.string().min(1, 'a stop sequence cannot be empty')).max(MAX_STOP_SEQUENCES, `stop takes at most ${MAX_STOP_SEQUENCES} sequences`),
      ])
      .nullable()
      .optional(),
    /** Ollama's: how long the model stays loaded after this request (seconds or a duration; negative: for good). */
    keep_alive: KeepAliveSchema,
  })
  .refine((body) => body.max_tokens == null || body.max_completion_tokens == null || body.max_tokens === body.max_completion_tokens, {
    message: 'max_tokens and max_completion_tokens are the same limit (max_completion_tokens is its newer name) and the two values differ; send one of them',
    path: ['max_completion_tokens'],
  });
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

function contentText(content: z.infer<typeof ContentSchema> | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((part) => part.text).join('\n');
}

function toChatMessage(m: z.infer<typeof OpenAiMessageSchema>): ChatMessage {
  const message: ChatMessage = { role: m.role, content: contentText(m.content) };
  if (m.tool_calls && m.tool_calls.length > 0) message.toolCalls = m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  if (m.tool_call_id !== undefined) message.toolCallId = m.tool_call_id;
  return message;
}

/** OpenAI's `response_format` as the runner protocol's; `text` (the default) is none. */
function responseFormatOf(format: ChatCompletionRequest['response_format']): SubmitRequest['responseFormat'] {
  if (format == null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, schema, strict } = format.json_schema;
  // A json_schema without a schema asks for any JSON object.
  if (!schema) return { type: 'json_object' };
  return { type: 'json_schema', schema, ...(name ? { name } : {}), ...(strict != null ? { strict } : {}) };
}

/** The sampling fields given (null and absent alike: the engine's default). */
export function samplingOf(s: {
  top_p?: number | null;
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
}): Pick<SubmitRequest, 'topP' | 'topK' | 'minP' | 'repetitionPenalty' | 'presencePenalty' | 'frequencyPenalty'> {
  return {
    ...(s.top_p != null ? { topP: s.top_p } : {}),
    ...(s.top_k != null ? { topK: s.top_k } : {}),
    ...(s.min_p != null ? { minP: s.min_p } : {}),
    ...(s.repetition_penalty != null ? { repetitionPenalty: s.repetition_penalty } : {}),
    ...(s.presence_penalty != null ? { presencePenalty: s.presence_penalty } : {}),
    ...(s.frequency_penalty != null ? { frequencyPenalty: s.frequency_penalty } : {}),
  };
}

/** The node's request for a validated chat-completions body. */
export function toSubmitRequest(body: ChatCompletionRequest, arrivedAt: number): SubmitRequest {
  const tools = (body.tools ?? []).map((t) => ({
    name: t.function.name,
    ...(t.function.description !== undefined ? { description: t.function.description } : {}),
    ...(t.function.parameters !== undefined ? { parameters: t.function.parameters } : {}),
  }));
  const choice = body.tool_choice;
  const responseFormat = responseFormatOf(body.response_format);
  return {
    model: body.model,
    messages: body.messages.map(toChatMessage),
    // max_completion_tokens replaced max_tokens in OpenAI's API: either name (both only if equal).
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    seed: body.seed ?? null,
    stop: stopSequences(body.stop),
    ...samplingOf(body),
    ...(tools.length > 0 ? { tools } : {}),
    ...(choice != null && tools.length > 0 ? { toolChoice: typeof choice === 'string' ? choice : { name: choice.function.name } } : {}),
    ...(responseFormat ? { responseFormat } : {}),
    arrivedAt,
  };
}

/** OpenAI's `stop` (a string or a list) as a list; empty when none. */
export function stopSequences(stop: ChatCompletionRequest['stop']): string[] {
  if (stop == null) return [];
  return typeof stop === 'string' ? [stop] : stop;
}
