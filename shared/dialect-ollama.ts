/**
 * Ollama's API as exobar serves it for local models (`/api/chat`, `/api/generate`,
 * `/api/show`; `/api/tags`, `/api/ps` and `/api/version` take no body): the fields it
 * honours, validated; unknown ones stripped, as Ollama ignores them. `options` carries
 * Ollama's sampler names (`num_predict`, `top_k`, `repeat_penalty`, …); `keep_alive` is
 * the model's residency after the request. docs/api.md lists them.
 */
import { z } from 'zod';
import { MAX_STOP_SEQUENCES } from './stop-sequences';

const KeepAlive = z.union([z.number(), z.string().max(40)]).nullable().optional();

export const OllamaOptionsSchema = z.object({
  num_predict: z.number().int().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  top_k: z.number().int().nonnegative().nullable().optional(),
  min_p: z.number().min(0).max(1).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop: z.array(z.string().min(1, 'a stop sequence cannot be empty')).max(MAX_STOP_SEQUENCES, `stop takes at most ${MAX_STOP_SEQUENCES} sequences`).nullable().optional(),
  repeat_penalty: z.number().positive().nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  /** The context window is the model's own; accepted and ignored, as with any runner option. */
  num_ctx: z.number().int().nullable().optional(),
});

/** `"json"` for any JSON, or a JSON schema. */
const Format = z.union([z.literal('json'), z.literal(''), z.record(z.string(), z.unknown())]).nullable().optional();

const ToolCall = z.object({ function: z.object({ name: z.string().min(1).max(200), arguments: z.record(z.string(), z.unknown()).optional() }) });

export const OllamaMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().default(''),
  images: z
    .array(z.string())
    .max(0, "images are not supported by exobar's local models")
    .nullable()
    .optional(),
  tool_calls: z.array(ToolCall).nullable().optional(),
  tool_name: z.string().optional(),
});

const Tool = z.object({
  type: z.literal('function', { error: 'only function tools are supported' }),
  function: z.object({ name: z.string().min(1).max(200), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
});

export const OllamaChatRequestSchema = z.object({
  model: z.string().min(1, 'model is required').max(300),
  messages: z.array(OllamaMessageSchema).max(10_000).default([]),
  tools: z.array(Tool).max(1000).nullable().optional(),
  format: Format,
  options: OllamaOptionsSchema.nullable().optional(),
  /** Ollama streams unless told not to. */
  stream: z.boolean().nullable().optional(),
  keep_alive: KeepAlive,
  think: z
    .union([z.boolean(), z.string()])
    .nullable()
    .optional()
    .refine((v) => v == null || v === false, { message: "thinking is not supported by exobar's local models" }),
});
export type OllamaChatRequest = z.infer<typeof OllamaChatRequestSchema>;

export const OllamaGenerateRequestSchema = z.object({
  model: z.string().min(1, 'model is required').max(300),
  prompt: z.string().optional(),
  system: z.string().optional(),
  format: Format,
  options: OllamaOptionsSchema.nullable().optional(),
  stream: z.boolean().nullable().optional(),
  keep_alive: KeepAlive,
  raw: z
    .boolean()
    .optional()
    .refine((v) => v !== true, { message: 'raw prompts are not supported: the prompt goes through the model\'s chat template' }),
  suffix: z
    .string()
    .optional()
    .refine((v) => v == null || v === '', { message: "suffix (insertion) is not supported by exobar's engines" }),
  images: z.array(z.string()).max(0, "images are not supported by exobar's local models").nullable().optional(),
});
export type OllamaGenerateRequest = z.infer<typeof OllamaGenerateRequestSchema>;

export const OllamaShowRequestSchema = z.object({ model: z.string().min(1).max(300).optional(), name: z.string().min(1).max(300).optional() }).refine((b) => b.model ?? b.name, {
  message: 'model is required',
});
