/**
 * OpenAI's Responses API for local models, stateless: `POST /v1/responses`. Input items
 * become the node's one chat request (chat/serve-chat.ts); the answer is a `response`
 * object with `message` and `function_call` output items, or its event stream
 * (`response.created`, `response.in_progress`, `response.output_item.added`,
 * `response.output_text.delta`, … `response.completed`). The response id is the node's
 * request id, so `POST /v1/cancel/{id}` cancels it. `previous_response_id` and
 * `store: true` are refused by name: nothing is kept to continue from.
 */
import { randomBytes } from 'node:crypto';
import { ResponsesRequestSchema, type ResponsesRequest } from '../../../../../shared/dialect-openai-responses';
import type { ChatMessage, ToolCall, Usage } from '../../../../../shared/runner-protocol';
import type { RequestHandle, SubmitRequest } from '../../../node/node-types';
import type { ModelLoader } from '../../../on-demand/model-loader';
import { rejected } from '../../api-error';
import { serveChat, type ChatAnswer, type Dialect } from '../../chat/serve-chat';
import type { ApiRoute, RouteContext } from '../../route-types';
import { SseStream } from '../../sse-stream';

export const OPENAI_RESPONSES_API = 'openai-responses';

const itemId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const textOf = (content: string | { text: string }[]): string => (typeof content === 'string' ? content : content.map((p) => p.text).join('\n'));

/** The input items as the node's messages; consecutive function calls join one assistant turn. */
export function responsesMessages(body: Pick<ResponsesRequest, 'input' | 'instructions'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (body.instructions) out.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') return [...out, { role: 'user', content: body.input }];
  for (const item of body.input) {
    if ('role' in item) {
      out.push({ role: item.role, content: textOf(item.content) });
    } else if (item.type === 'function_call') {
      const call: ToolCall = { id: item.call_id, name: item.name, arguments: item.arguments };
      const last = out[out.length - 1];
      if (last?.role === 'assistant' && last.toolCalls) last.toolCalls.push(call);
      else out.push({ role: 'assistant', content: '', toolCalls: [call] });
    } else {
      out.push({ role: 'tool', toolCallId: item.call_id, content: textOf(item.output) });
    }
  }
  return out;
}

/** The Responses usage; `cached_tokens` is the runner's prompt-cache hit (part of `input_tokens`), 0 when it did not say, as in chat completions. */
function usageOf(usage: Usage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

interface Items {
  messageId: string;
  callIds: Map<string, string>;
}

function messageItem(id: string, text: string, status: string) {
  return { type: 'message', id, status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] };
}

function callItem(id: string, call: ToolCall, status: string) {
  return { type: 'function_call', id, call_id: call.id, name: call.name, arguments: call.arguments, status };
}

function output(answer: Pick<ChatAnswer, 'text' | 'toolCalls'>, items: Items): unknown[] {
  const out: unknown[] = [];
  if (answer.text !== '' || answer.toolCalls.length === 0) out.push(messageItem(items.messageId, answer.text, 'completed'));
  for (const call of answer.toolCalls) out.push(callItem(items.callIds.get(call.id) ?? itemId('fc'), call, 'completed'));
  return out;
}

/** The `response` object: in progress (no output yet) or ended. */
function responseObject(handle: RequestHandle, body: ResponsesRequest, ended: { answer: ChatAnswer; items: Items } | null) {
  const incomplete = ended?.answer.finishReason === 'length' ? { reason: 'max_output_tokens' } : ended?.answer.finishReason === 'cancelled' ? { reason: 'cancelled' } : null;
  return {
    id: handle.id,
    object: 'response',
    created_at: handle.created,
    status: ended === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: handle.model,
    output: ended ? output(ended.answer, ended.items) : [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    store: false,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
    top_p: body.top_p ?? null,
    truncation: body.truncation ?? 'disabled',
    metadata: body.metadata ?? {},
    usage: ended ? usageOf(ended.answer.usage) : null,
  };
}

function responsesDialect(body: ResponsesRequest): Dialect {
  const items: Items = { messageId: itemId('msg'), callIds: new Map() };
  return {
    api: OPENAI_RESPONSES_API,
    whole(ctx, handle, answer) {
      ctx.json(200, responseObject(handle, body, { answer, items }));
    },
    stream(ctx, handle) {
      const sse = new SseStream(ctx.res);
      let sequence = 0;
      let outputIndex = -1;
      let text: string | null = null;
      const calls: ToolCall[] = [];
      const send = (type: string, payload: Record<string, unknown>): void => sse.event(type, { type, sequence_number: sequence++, ...payload });
      const closeText = (): void => {
        if (text === null) return;
        const base = { item_id: items.messageId, output_index: outputIndex, content_index: 0 };
        send('response.output_text.done', { ...base, text, logprobs: [] });
        send('response.content_part.done', { ...base, part: { type: 'output_text', text, annotations: [] } });
        send('response.output_item.done', { output_index: outputIndex, item: messageItem(items.messageId, text, 'completed') });
      };
      return {
        open() {
          sse.open();
          send('response.created', { response: responseObject(handle, body, null) });
          send('response.in_progress', { response: responseObject(handle, body, null) });
        },
        text(delta) {
          if (text === null) {
            text = '';
            outputIndex += 1;
            send('response.output_item.added', { output_index: outputIndex, item: { ...messageItem(items.messageId, '', 'in_progress'), content: [] } });
            send('response.content_part.added', { item_id: items.messageId, output_index: outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
          }
          text += delta;
          send('response.output_text.delta', { item_id: items.messageId, output_index: outputIndex, content_index: 0, delta, logprobs: [] });
        },
        toolCalls(toolCalls) {
          for (const call of toolCalls) {
            const id = itemId('fc');
            items.callIds.set(call.id, id);
            calls.push(call);
            outputIndex += 1;
            send('response.output_item.added', { output_index: outputIndex, item: callItem(id, { ...call, arguments: '' }, 'in_progress') });
            send('response.function_call_arguments.delta', { item_id: id, output_index: outputIndex, delta: call.arguments });
            send('response.function_call_arguments.done', { item_id: id, output_index: outputIndex, arguments: call.arguments });
            send('response.output_item.done', { output_index: outputIndex, item: callItem(id, call, 'completed') });
          }
        },
        progress: (processed, total) => sse.comment(`prefill_progress ${JSON.stringify({ processed_tokens: processed, total_tokens: total })}`),
        end(end) {
          closeText();
          const answer: ChatAnswer = { ...end, text: text ?? '', toolCalls: calls };
          const response = responseObject(handle, body, { answer, items });
          send(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
          sse.end();
        },
        fail(error) {
          send('error', { code: error.code, message: error.message, param: error.options.param ?? null });
          sse.end();
        },
      };
    },
  };
}

function toSubmit(body: ResponsesRequest, arrivedAt: number): SubmitRequest {
  const tools = (body.tools ?? []).map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), ...(t.parameters ? { parameters: t.parameters } : {}) }));
  const choice = body.tool_choice;
  const format = body.text?.format;
  return {
    model: body.model,
    messages: responsesMessages(body),
    maxTokens: body.max_output_tokens ?? null,
    temperature: body.temperature ?? null,
    seed: null,
    ...(body.top_p != null ? { topP: body.top_p } : {}),
    ...(tools.length > 0 ? { tools, ...(choice ? { toolChoice: typeof choice === 'string' ? choice : { name: choice.name } } : {}) } : {}),
    ...(format?.type === 'json_object' ? { responseFormat: { type: 'json_object' as const } } : {}),
    ...(format?.type === 'json_schema'
      ? { responseFormat: { type: 'json_schema' as const, schema: format.schema, ...(format.name ? { name: format.name } : {}), ...(format.strict != null ? { strict: format.strict } : {}) } }
      : {}),
    arrivedAt,
  };
}

async function responses(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  const body = await ctx.body(ResponsesRequestSchema);
  if (body.previous_response_id != null) {
    throw rejected(400, 'unsupported_parameter', "Unsupported parameter: 'previous_response_id': exobar's Responses API is stateless (nothing is stored); send the whole conversation as input items", 'previous_response_id');
  }
  if (body.store === true) {
    throw rejected(400, 'unsupported_parameter', "Unsupported parameter: 'store' true: exobar's Responses API stores nothing; send store: false", 'store');
  }
  await serveChat(ctx, loader, { ...toSubmit(body, ctx.arrivedAt), api: OPENAI_RESPONSES_API, stream: body.stream === true }, responsesDialect(body));
}

export function openAiResponsesRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return [{ method: 'POST', path: '/v1/responses', auth: false, handle: (ctx) => responses(ctx, options.loader) }];
}

