/**
 * OpenAI's legacy completions request (`POST /v1/completions`) as exobar serves it for
 * local models. The prompt goes to the model as one user turn through its chat template
 * (the runner protocol has no raw-prompt mode). What cannot be honoured is refused by
 * name: `echo`, `suffix`, `logprobs`, `best_of` above 1, `n` above 1, several prompts.
 */
import { z } from 'zod';
import { MAX_STOP_SEQUENCES } from './stop-sequences';

const Stop = z.union([
  z.string().min(1, 'a stop sequence cannot be empty'),
  z.array(z.string().min(1, 'a stop sequence cannot be empty')).max(MAX_STOP_SEQUENCES, `stop takes at most ${MAX_STOP_SEQUENCES} sequences`),
]);

const refusedUnless = <T extends z.ZodType>(schema: T, ok: (v: z.output<T>) => boolean, why: string) => schema.nullable().optional().refine((v) => v == null || ok(v as z.output<T>), { message: why });

export const CompletionsRequestSchema = z.object({
  model: z.string().min(1, 'model is required').max(300),
  prompt: z.union([z.string(), z.array(z.string()).length(1, 'exobar takes one prompt per request; send several requests')]),
  /** OpenAI's default is 16 tokens. */
  max_tokens: z.number().int().positive().max(1_000_000).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().gt(0).max(1).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop: Stop.nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  user: z.string().optional(),
  n: refusedUnless(z.number().int(), (v) => v === 1, 'n must be 1: exobar generates one choice per request'),
  best_of: refusedUnless(z.number().int(), (v) => v === 1, 'best_of must be 1: exobar generates one choice per request'),
  echo: refusedUnless(z.boolean(), (v) => !v, 'echo is not supported: the prompt goes through the model\'s chat template'),
  suffix: refusedUnless(z.string(), (v) => v === '', 'suffix (insertion) is not supported by exobar\'s engines'),
  logprobs: refusedUnless(z.number().int(), (v) => v === 0, "log probabilities are not returned by exobar's engines"),
  logit_bias: refusedUnless(z.record(z.string(), z.number()), (v) => Object.keys(v).length === 0, "logit bias is not implemented by exobar's engines"),
});
export type CompletionsRequest = z.infer<typeof CompletionsRequestSchema>;
