/**
 * Anthropic's Messages API for local models: `POST /v1/messages` (whole or streamed)
 * and `POST /v1/messages/count_tokens`. The request becomes the node's one chat request
 * (chat/serve-chat.ts: the same gates, measurement and cancel as every dialect); the
 * answer goes back in Anthropic's shapes: content blocks (`text`, `tool_use`),
 * `stop_reason`, usage with its cache fields, the `message_start` … `message_stop`
 * event stream, and `{"type":"error","error":{...}}` errors. The message id is the
 * node's request id, so `POST /v1/cancel/{id}` cancels it.
 */
import type { ChatMessage, ToolCall } from '../../../../../shared/runner-protocol';
import {
  AnthropicCountTokensRequestSchema,
  AnthropicMessagesRequestSchema,
  type AnthropicCountTokensRequest,
  type AnthropicMessagesRequest,
} from '../../../../../shared/dialect-anthropic-messages';
import { countPromptTokens } from '../../../../../shared/token-count';
import type { Usage } from '../../../../../shared/runner-protocol';
import type { ModelLoader } from '../../../on-demand/model-loader';
import type { ApiError } from '../../api-error';
import { serveChat, type ChatFinishReason, type Dialect } from '../../chat/serve-chat';
import type { ApiRoute, RouteContext } from '../../route-types';
import { SseStream } from '../../sse-stream';

export const ANTHROPIC_MESSAGES_API = 'anthropic-messages';

/** Anthropic's error `type` for a status. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 503) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

export function anthropicErrorBody(error: ApiError) {
  return { type: 'error' as const, error: { type: errorType(error.status), message: error.message } };
}

/**
 * Anthropic's `stop_reason`; `stop_sequence` when one of the request's `stop_sequences`
 * ended it (the runner names it); `cancelled` (exo's word) for a request cancelled by the
 * client or `/v1/cancel/{id}`.
 */
function stopReason(reason: ChatFinishReason, stopSequence: string | null): string {
  if (reason === 'stop' && stopSequence !== null) return 'stop_sequence';
  if (reason === 'length') return 'max_tokens';
  if (reason === 'tool_calls') return 'tool_use';
  if (reason === 'cancelled') return 'cancelled';
  return 'end_turn';
}

/**
 * Anthropic's usage, where the prompt is split three ways: `cache_read_input_tokens` the
 * runner's prompt-cache hit (`cachedTokens`), `input_tokens` the rest, and
 * `cache_creation_input_tokens` 0: exobar's prefix cache is automatic, nothing is written
 * at a client's request (Anthropic's `cache_control`) nor counted apart for it. A runner
 * that did not say what its cache served leaves `cache_read_input_tokens` null
 * (Anthropic's "unknown"): exobar never invents a figure.
 */
function anthropicUsage(usage: Usage) {
  const cached = usage.cachedTokens;
  return {
    input_tokens: usage.promptTokens - (cached ?? 0),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached ?? null,
  };
}

function parseInput(call: ToolCall): unknown {
  try {
    return JSON.parse(call.arguments);
  } catch {
    // A model's malformed arguments are still shown, as text, rather than dropped.
    return { arguments: call.arguments };
  }
}

const textOf = (blocks: string | { text: string }[] | undefined): string => (blocks == null ? '' : typeof blocks === 'string' ? blocks : blocks.map((b) => b.text).join('\n'));

/** The conversation as the node's messages: `system` first, tool results as `tool` messages, tool uses as calls. */
export function anthropicMessages(body: Pick<AnthropicCountTokensRequest, 'system' | 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.system !== undefined && textOf(body.system) !== '') out.push({ role: 'system', content: textOf(body.system) });
  for (const message of body.messages) {
    if (typeof message.content === 'string') {
      out.push({ role: message.role, content: message.content });
      continue;
    }
    const texts: string[] = [];
    const calls: ToolCall[] = [];
    for (const block of message.content) {
      if (block.type === 'text') texts.push(block.text);
      else if (block.type === 'tool_use') calls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
      else out.push({ role: 'tool', toolCallId: block.tool_use_id, content: (block.is_error ? 'error: ' : '') + textOf(block.content) });
    }
    if (texts.length > 0 || calls.length > 0) out.push({ role: message.role, content: texts.join('\n'), ...(calls.length > 0 ? { toolCalls: calls } : {}) });
  }
  return out;
}

function toolsOf(body: Pick<AnthropicCountTokensRequest, 'tools' | 'tool_choice'>) {
  const tools = (body.tools ?? []).map((t) => ({ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.input_schema }));
  if (tools.length === 0) return {};
  const choice = body.tool_choice;
  const toolChoice = choice == null || choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : choice.type === 'none' ? 'none' : { name: choice.name };
  return { tools, toolChoice } as const;
}

const anthropicDialect: Dialect = {
  api: ANTHROPIC_MESSAGES_API,
  whole(ctx, handle, answer) {
    const content: unknown[] = [];
    if (answer.text !== '' || answer.toolCalls.length === 0) content.push({ type: 'text', text: answer.text });
    for (const call of answer.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call) });
    ctx.json(200, {
      id: handle.id,
      type: 'message',
      role: 'assistant',
      model: handle.model,
      content,
      stop_reason: stopReason(answer.finishReason, answer.stopSequence),
      stop_sequence: answer.stopSequence,
      usage: anthropicUsage(answer.usage),
    });
  },
  stream(ctx, handle) {
    const sse = new SseStream(ctx.res);
    let index = -1;
    let textOpen = false;
    const closeText = (): void => {
      if (!textOpen) return;
      sse.event('content_block_stop', { type: 'content_block_stop', index });
      textOpen = false;
    };
    return {
      open() {
        sse.open();
        sse.event('message_start', {
          type: 'message_start',
          message: {
            id: handle.id,
            type: 'message',
            role: 'assistant',
            model: handle.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: anthropicUsage({ promptTokens: handle.promptTokens, completionTokens: 0 }),
          },
        });
        sse.event('ping', { type: 'ping' });
      },
      text(text) {
        if (!textOpen) {
          index += 1;
          textOpen = true;
          sse.event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        }
        sse.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      },
      toolCalls(calls) {
        closeText();
        for (const call of calls) {
          index += 1;
          sse.event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
          sse.event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.arguments } });
          sse.event('content_block_stop', { type: 'content_block_stop', index });
        }
      },
      progress: (processed, total) => sse.comment(`prefill_progress ${JSON.stringify({ processed_tokens: processed, total_tokens: total })}`),
      end(end) {
        closeText();
        sse.event('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: stopReason(end.finishReason, end.stopSequence), stop_sequence: end.stopSequence },
          usage: anthropicUsage(end.usage),
        });
        sse.event('message_stop', { type: 'message_stop' });
        sse.end();
      },
      fail(error) {
        sse.event('error', anthropicErrorBody(error));
        sse.end();
      },
    };
  },
};

async function messages(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  ctx.useErrorBody?.(anthropicErrorBody);
  const body: AnthropicMessagesRequest = await ctx.body(AnthropicMessagesRequestSchema);
  await serveChat(
    ctx,
    loader,
    {
      api: ANTHROPIC_MESSAGES_API,
      model: body.model,
      messages: anthropicMessages(body),
      maxTokens: body.max_tokens,
      temperature: body.temperature ?? null,
      seed: null,
      stop: body.stop_sequences ?? [],
      ...(body.top_p !== undefined ? { topP: body.top_p } : {}),
      ...(body.top_k !== undefined ? { topK: body.top_k } : {}),
      ...toolsOf(body),
      stream: body.stream === true,
      arrivedAt: ctx.arrivedAt,
    },
    anthropicDialect,
  );
}

/** Tokens the prompt would take, as the node counts them (shared/token-count.ts: exact for the sim, a lower bound for MLX). */
async function countTokens(ctx: RouteContext): Promise<void> {
  ctx.useErrorBody?.(anthropicErrorBody);
  const body = await ctx.body(AnthropicCountTokensRequestSchema);
  ctx.json(200, { input_tokens: countPromptTokens(anthropicMessages(body)) });
}

export function anthropicMessagesRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return [
    { method: 'POST', path: '/v1/messages', auth: false, handle: (ctx) => messages(ctx, options.loader) },
    { method: 'POST', path: '/v1/messages/count_tokens', auth: false, handle: countTokens },
  ];
}
