/**
 * OpenAI's response shapes for chat completions: the whole `chat.completion` and the
 * streamed `chat.completion.chunk`s, plus exo's `generation_stats` comment payload.
 */
import type { GenerationStats, ToolCall, Usage } from '../../../shared/runner-protocol';
import type { RequestHandle } from '../node/node-types';

/**
 * OpenAI's finish reasons plus `cancelled` (exo's name) for a request cancelled by the
 * client or by `/v1/cancel/{id}`. OpenAI clients pass unknown values through unchanged.
 */
export type ApiFinishReason = 'stop' | 'length' | 'tool_calls' | 'cancelled';

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's: `cached_tokens` of the prompt came from the runner's prompt cache (0 without a cache). */
  prompt_tokens_details: { cached_tokens: number };
}

export function openAiUsage(usage: Usage): OpenAiUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
  };
}

type Ids = Pick<RequestHandle, 'id' | 'created' | 'model'>;

/** OpenAI's `tool_calls` of a message (or, with `index`, of a streamed delta). */
export function openAiToolCalls(calls: readonly ToolCall[], firstIndex?: number) {
  return calls.map((c, i) => ({
    ...(firstIndex !== undefined ? { index: firstIndex + i } : {}),
    id: c.id,
    type: 'function' as const,
    function: { name: c.name, arguments: c.arguments },
  }));
}

export function completionBody(handle: Ids, content: string, finishReason: ApiFinishReason, usage: Usage, toolCalls: readonly ToolCall[] = []) {
  // OpenAI's content is null for a turn that is only tool calls.
  const message =
    toolCalls.length > 0
      ? { role: 'assistant' as const, content: content === '' ? null : content, refusal: null, tool_calls: openAiToolCalls(toolCalls) }
      : { role: 'assistant' as const, content, refusal: null };
  return {
    id: handle.id,
    object: 'chat.completion' as const,
    created: handle.created,
    model: handle.model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
    usage: openAiUsage(usage),
  };
}

/** What every chunk of one stream carries. */
function chunkEnvelope(handle: Ids) {
  return {
    id: handle.id,
    object: 'chat.completion.chunk' as const,
    created: handle.created,
    model: handle.model,
    system_fingerprint: null,
  };
}

/** The first chunk, sent as the stream opens: the role and an empty content, as OpenAI's first delta. */
export function roleChunk(handle: Ids) {
  return {
    ...chunkEnvelope(handle),
    choices: [{ index: 0, delta: { role: 'assistant' as const, content: '' }, logprobs: null, finish_reason: null }],
  };
}

/** A content chunk. */
export function contentChunk(handle: Ids, text: string) {
  return {
    ...chunkEnvelope(handle),
    choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }],
  };
}

/** Complete tool calls in one delta, numbered from `firstIndex` within the turn. */
export function toolCallChunk(handle: Ids, calls: readonly ToolCall[], firstIndex: number) {
  return {
    ...chunkEnvelope(handle),
    choices: [{ index: 0, delta: { tool_calls: openAiToolCalls(calls, firstIndex) }, logprobs: null, finish_reason: null }],
  };
}

/** The chunk that closes the choice. */
export function finishChunk(handle: Ids, finishReason: ApiFinishReason) {
  return {
    ...chunkEnvelope(handle),
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }],
  };
}

/** OpenAI's final usage chunk (`stream_options.include_usage`): no choices, only usage. */
export function usageChunk(handle: Ids, usage: Usage) {
  return {
    ...chunkEnvelope(handle),
    choices: [],
    usage: openAiUsage(usage),
  };
}

/** exo's `: generation_stats {...}` comment payload (snake_case, like the rest of the wire). */
export function generationStatsPayload(stats: GenerationStats): Record<string, number> {
  return {
    prompt_tps: stats.promptTps,
    generation_tps: stats.generationTps,
    prompt_tokens: stats.promptTokens,
    generation_tokens: stats.generationTokens,
    peak_memory_bytes: stats.peakMemoryBytes,
  };
}
