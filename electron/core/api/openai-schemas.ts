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

export const OpenAiMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']),
  content: ContentSchema.optional(),
  name: z.string().max(256).optional(),
});

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

/** The node's request for a validated chat-completions body. */
export function toSubmitRequest(body: ChatCompletionRequest, arrivedAt: number): SubmitRequest {
  const messages: ChatMessage[] = body.messages.map((m) => ({ role: m.role, content: contentText(m.content) }));
  return {
    model: body.model,
    messages,
    // max_completion_tokens replaced max_tokens in OpenAI's API: either name (both only if equal).
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
    temperature: body.temperature ?? null,
    seed: body.seed ?? null,
    stop: stopSequences(body.stop),
    arrivedAt,
  };
}

/** OpenAI's `stop` (a string or a list) as a list; empty when none. */
export function stopSequences(stop: ChatCompletionRequest['stop']): string[] {
  if (stop == null) return [];
  return typeof stop === 'string' ? [stop] : stop;
}
