/**
 * What exobar checks of a chat-completions body before it goes to exo. Loose on
 * purpose: exo accepts more fields than exobar's own engine (tools, top_k, min_p,
 * enable_thinking, reasoning_effort, images…), and they pass through untouched; but
 * anything that is not a JSON object with a model and a list of messages is refused
 * here with exobar's own 400, so nothing malformed reaches exo.
 */
import { z } from 'zod';

const MessageSchema = z.looseObject({
  role: z.string().min(1).max(64),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
});

const optionalNumber = z.number().finite().nullable().optional();

export const ExoChatRequestSchema = z.looseObject({
  model: z.string().min(1, 'model is required').max(300),
  messages: z.array(MessageSchema).min(1, 'messages must hold at least one message').max(10_000),
  stream: z.boolean().nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: optionalNumber,
  top_p: optionalNumber,
  top_k: z.number().int().nullable().optional(),
  min_p: optionalNumber,
  seed: z.number().int().nullable().optional(),
});
export type ExoChatRequest = z.infer<typeof ExoChatRequestSchema>;

/** Just enough to route: the model of a body, whatever else it holds. */
export const RoutableSchema = z.looseObject({ model: z.string() });
