/**
 * Anthropic's Messages request (`POST /v1/messages`, `/v1/messages/count_tokens`), as
 * exobar serves it for local models: the fields it honours, validated; the ones it
 * ignores pass (`passthrough` is not used: unknown fields are stripped, as Anthropic's
 * SDKs send new optional fields over time). docs/api.md lists them field by field.
 */
import { z } from 'zod';
import { MAX_STOP_SEQUENCES } from './stop-sequences';

const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
const ToolUseBlock = z.object({ type: z.literal('tool_use'), id: z.string().min(1).max(200), name: z.string().min(1).max(200), input: z.unknown() });
const ToolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(200),
  content: z.union([z.string(), z.array(TextBlock)]).optional(),
  is_error: z.boolean().optional(),
});

export const AnthropicContentBlockSchema = z.discriminatedUnion(
  'type',
  [TextBlock, ToolUseBlock, ToolResultBlock],
  { error: 'content blocks must be text, tool_use or tool_result; images, documents and thinking blocks are not supported by exobar\'s local models' },
);

export const AnthropicMessageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(AnthropicContentBlockSchema)]),
});

export const AnthropicToolSchema = z.object({
  name: z.string().min(1).max(200),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});

export const AnthropicToolChoiceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('tool'), name: z.string().min(1).max(200), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('none') }),
]);

const common = {
  model: z.string().min(1, 'model is required').max(300),
  messages: z.array(AnthropicMessageSchema).min(1, 'messages must hold at least one message').max(10_000),
  system: z.union([z.string(), z.array(TextBlock)]).optional(),
  tools: z.array(AnthropicToolSchema).max(1000).optional(),
  tool_choice: AnthropicToolChoiceSchema.optional(),
};

export const AnthropicMessagesRequestSchema = z.object({
  ...common,
  max_tokens: z.number().int().positive().max(1_000_000),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string().min(1, 'a stop sequence cannot be empty')).max(MAX_STOP_SEQUENCES, `stop_sequences takes at most ${MAX_STOP_SEQUENCES}`).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().nonnegative().optional(),
  metadata: z.object({ user_id: z.string().nullable().optional() }).optional(),
  service_tier: z.string().optional(),
  thinking: z
    .object({ type: z.string() })
    .refine((t) => t.type === 'disabled', { message: "extended thinking is not supported by exobar's local models; leave thinking out" })
    .optional(),
});
export type AnthropicMessagesRequest = z.infer<typeof AnthropicMessagesRequestSchema>;

export const AnthropicCountTokensRequestSchema = z.object(common);
export type AnthropicCountTokensRequest = z.infer<typeof AnthropicCountTokensRequestSchema>;
