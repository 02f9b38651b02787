/**
 * OpenAI's Responses request (`POST /v1/responses`), stateless, as exobar serves it for
 * local models: input items (messages, function calls and their outputs),
 * `instructions`, function tools, `text.format` for structured output, sampling.
 * `previous_response_id` and `store: true` are refused by name by the route (nothing is
 * stored); fields not listed are stripped. docs/api.md lists them.
 */
import { z } from 'zod';

const TextPart = z.object({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() });

const MessageItem = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([
    z.string(),
    z.array(TextPart, { error: 'content parts must be input_text or output_text; images, files and audio are not supported by exobar\'s local models' }),
  ]),
});

const FunctionCallItem = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string(),
  id: z.string().optional(),
  status: z.string().optional(),
});

const FunctionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1).max(200),
  output: z.union([z.string(), z.array(TextPart)]),
  id: z.string().optional(),
  status: z.string().optional(),
});

export const ResponsesInputItemSchema = z.union([MessageItem, FunctionCallItem, FunctionCallOutputItem], {
  error: 'input items must be messages, function_call or function_call_output items',
});

const FunctionTool = z.object({
  type: z.literal('function', { error: 'only function tools are supported ({"type":"function","name":...})' }),
  name: z.string().min(1).max(200),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const Format = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string().optional(), schema: z.record(z.string(), z.unknown()), strict: z.boolean().nullable().optional(), description: z.string().optional() }),
]);

export const ResponsesRequestSchema = z.object({
  model: z.string().min(1, 'model is required').max(300),
  input: z.union([z.string(), z.array(ResponsesInputItemSchema).min(1).max(10_000)]),
  instructions: z.string().nullable().optional(),
  tools: z.array(FunctionTool).max(1000).optional(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), name: z.string().min(1).max(200) })]).optional(),
  text: z.object({ format: Format.optional() }).optional(),
  max_output_tokens: z.number().int().positive().max(1_000_000).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: z.string().optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
