/**
 * Every parameter of OpenAI's chat-completions request and what exobar does with it:
 * honoured, ignored because it cannot change the answer, or refused with a 400 that names
 * it and says why. Nothing a client sends is silently dropped: a parameter that is not in
 * this table is refused as OpenAI refuses it ("Unrecognized request argument supplied").
 * docs/api.md lists the same table (a test keeps the two in step).
 */
import { rejected, type ApiError } from './api-error';

export type ParameterSupport = 'honoured' | 'ignored' | 'refused';

export interface ParameterRule {
  name: string;
  support: ParameterSupport;
  /**
   * For a refused parameter: why, given a value that would change the answer; null for a
   * value that asks for nothing (null, `false`, `0`, an empty list, the default).
   */
  refuse?: (value: unknown) => string | null;
}

const isUnset = (value: unknown): boolean => value === null || value === undefined;
const isEmptyList = (value: unknown): boolean => Array.isArray(value) && value.length === 0;
const isEmptyObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/** Refused whenever given (anything but null). */
const always = (why: string) => (value: unknown) => (isUnset(value) ? null : why);
/** Refused unless the value is its no-op default. */
const unless = (isNoOp: (value: unknown) => boolean, why: string) => (value: unknown) => (isUnset(value) || isNoOp(value) ? null : why);

const LEGACY_FUNCTIONS = 'the legacy `functions` / `function_call` parameters are not taken: send the same functions as `tools` (and `tool_choice`)';
const TEXT_ONLY = "exobar's engines take and produce text only";
const NO_SAMPLER = (what: string) => `exobar's engines do not implement ${what}; leave it out (or send its neutral value)`;

/** The table, in OpenAI's reference order. */
export const CHAT_COMPLETION_PARAMETERS: readonly ParameterRule[] = [
  { name: 'messages', support: 'honoured' },
  { name: 'model', support: 'honoured' },
  { name: 'audio', support: 'refused', refuse: always(`audio output is not supported: ${TEXT_ONLY}`) },
  { name: 'frequency_penalty', support: 'honoured' },
  { name: 'function_call', support: 'refused', refuse: unless((v) => v === 'none', LEGACY_FUNCTIONS) },
  { name: 'functions', support: 'refused', refuse: unless(isEmptyList, LEGACY_FUNCTIONS) },
  { name: 'logit_bias', support: 'refused', refuse: unless(isEmptyObject, NO_SAMPLER('logit bias')) },
  { name: 'logprobs', support: 'refused', refuse: unless((v) => v === false, "log probabilities are not returned by exobar's engines") },
  { name: 'max_completion_tokens', support: 'honoured' },
  { name: 'max_tokens', support: 'honoured' },
  { name: 'metadata', support: 'ignored' },
  {
    name: 'modalities',
    support: 'refused',
    refuse: unless((v) => Array.isArray(v) && v.every((m) => m === 'text'), `only the "text" modality is supported: ${TEXT_ONLY}`),
  },
  { name: 'n', support: 'refused', refuse: unless((v) => v === 1, 'n must be 1: exobar generates one choice per request; send several requests instead') },
  // The model's own template and parser decide how many calls one turn holds.
  { name: 'parallel_tool_calls', support: 'ignored' },
  { name: 'prediction', support: 'refused', refuse: always("predicted outputs are not supported by exobar's engines") },
  { name: 'presence_penalty', support: 'honoured' },
  { name: 'prompt_cache_key', support: 'ignored' },
  { name: 'reasoning_effort', support: 'refused', refuse: always('the models exobar runs have no reasoning-effort setting') },
  { name: 'response_format', support: 'honoured' },
  { name: 'safety_identifier', support: 'ignored' },
  { name: 'seed', support: 'honoured' },
  { name: 'service_tier', support: 'ignored' },
  { name: 'stop', support: 'honoured' },
  { name: 'store', support: 'refused', refuse: unless((v) => v === false, 'exobar does not store completions; nothing could be retrieved later') },
  { name: 'stream', support: 'honoured' },
  { name: 'stream_options', support: 'honoured' },
  { name: 'temperature', support: 'honoured' },
  { name: 'tool_choice', support: 'honoured' },
  { name: 'tools', support: 'honoured' },
  { name: 'top_logprobs', support: 'refused', refuse: unless((v) => v === 0, "log probabilities are not returned by exobar's engines") },
  { name: 'top_p', support: 'honoured' },
  { name: 'user', support: 'ignored' },
  {
    name: 'verbosity',
    support: 'refused',
    refuse: always('the models exobar runs have no verbosity setting; ask for shorter or longer answers in the messages'),
  },
  { name: 'web_search_options', support: 'refused', refuse: always("exobar's engines cannot search the web") },
  // Not OpenAI's: Ollama's, which clients of local servers send (how long the model stays loaded).
  { name: 'keep_alive', support: 'honoured' },
  // Not OpenAI's: the sampler settings local servers (vLLM, LM Studio, llama.cpp) take under these names.
  { name: 'top_k', support: 'honoured' },
  { name: 'min_p', support: 'honoured' },
  { name: 'repetition_penalty', support: 'honoured' },
];

const RULES = new Map(CHAT_COMPLETION_PARAMETERS.map((rule) => [rule.name, rule]));

/**
 * The first parameter of `body` that exobar does not know or cannot honour, as a counted
 * 400 naming it (`param`) and saying why; null when every parameter can be served.
 */
export function refuseUnsupportedParameters(body: Record<string, unknown>): ApiError | null {
  for (const [name, value] of Object.entries(body)) {
    const rule = RULES.get(name);
    if (!rule) {
      return rejected(400, 'unknown_parameter', `Unrecognized request argument supplied: ${name} (docs/api.md lists the parameters exobar takes)`, name);
    }
    const why = rule.refuse?.(value) ?? null;
    if (why !== null) return rejected(400, 'unsupported_parameter', `Unsupported parameter: '${name}' ${describeValue(value)}is not supported: ${why}.`, name);
  }
  return null;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `with value ${JSON.stringify(value)} `;
  return '';
}
