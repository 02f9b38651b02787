/**
 * User text out of exo's state before it goes into a diagnostic bundle. In exo's
 * State, user text lives in each task's `taskParams` (TextGenerationTaskParams,
 * exo 0.3.70's src/exo/shared/types/text_generation.py): `input`, `instructions`,
 * `chat_template_messages`, `images`, `tools`, `stop`, and whatever exo adds later.
 * So `taskParams` keeps only the settings named below (numbers, flags, the model id)
 * and every other field is replaced, whichever casing exo used. The bundle's own
 * Redactor still runs over the result for secrets, addresses and names.
 */

/** TextGenerationTaskParams fields that carry no user text (snake_case as exo sends them). */
const KEPT_PARAMS = new Set([
  'model',
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'stream',
  'bench',
  'use_prefix_cache',
  'seed',
  'reasoning_effort',
  'enable_thinking',
  'logprobs',
  'top_logprobs',
  'repetition_penalty',
  'repetition_context_size',
  'presence_penalty',
  'frequency_penalty',
]);

export const REDACTED_TEXT = '[redacted:text]';

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function redactParams(params: unknown, count: { fields: number }): unknown {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    count.fields++;
    return REDACTED_TEXT;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (KEPT_PARAMS.has(snake(key)) || value === null) out[key] = value;
    else {
      out[key] = REDACTED_TEXT;
      count.fields++;
    }
  }
  return out;
}

function walk(value: unknown, count: { fields: number }): unknown {
  if (Array.isArray(value)) return value.map((v) => walk(v, count));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = key === 'taskParams' || key === 'task_params' ? redactParams(v, count) : walk(v, count);
  }
  return out;
}

/**
 * A copy of exo's state (or any part of it) with the user text of every task
 * replaced; `fields` counts the replaced fields. The input passed exobar's nesting cap
 * (64 levels), so the recursion is bounded.
 */
export function redactExoState(state: unknown): { state: unknown; fields: number } {
  const count = { fields: 0 };
  return { state: walk(state, count), fields: count.fields };
}
