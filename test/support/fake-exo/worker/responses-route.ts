/**
 * The fake exo's `POST /v1/responses`, as exo 0.3.70 answers it (src/exo/api/adapters/responses.py,
 * `generate_responses_stream` / `collect_responses_response`; types in
 * src/exo/api/types/openai_responses.py), through the same fake worker as chat completions, so the
 * stall, the hold and the cancel behave alike. What exo does, and so this fake:
 * - a stream: `: keep-alive` first and after 10 s idle (keepalive.py); `response.created` and
 *   `response.in_progress` (response id `resp_<command id>`, status in_progress, output []); no
 *   prefill progress (the adapter skips `PrefillProgressChunk`); at the first token
 *   `response.output_item.added` (message `item_<command id>`) and `response.content_part.added`,
 *   one `response.output_text.delta` per token; a tool call whole, as `response.output_item.added`
 *   (function_call `fc_<call id>`, call_id `call_<call id>`, arguments ""), one
 *   `response.function_call_arguments.delta` with the whole arguments,
 *   `response.function_call_arguments.done`, `response.output_item.done`; then (the message item
 *   opened empty if no text came) `response.output_text.done`, `response.content_part.done`,
 *   `response.output_item.done` and `response.completed` with the usage. Each event has a
 *   `sequence_number` from 1. An error ends the events as usual (exo breaks out); a cancelled
 *   command's stream closes with no more events.
 * - whole: one `ResponsesResponse` (id `resp_<command id>`, a message item and function_call items
 *   whose id and call_id are the call's own id, `output_text`, usage); a failure is a 500.
 * - 404 `No instance found for model …` before anything; FastAPI's 422 without `model` or `input`.
 */
import type { ServerResponse } from 'node:http';
import { countPromptTokens } from '../../../../shared/token-count';
import { exoError, sendJson } from './exo-answers';
import type { GenerationSink } from './fake-runner';
import type { FakeToolCall } from './fake-tool-call';
import type { FakeExoWorker } from './fake-worker';

const KEEPALIVE_MS = 10_000;

interface ResponsesBody {
  model: string;
  stream: boolean;
  maxTokens: number;
  promptTokens: number;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p: { text?: unknown }) => String(p?.text ?? '')).join('') : '';

function parse(body: Buffer): ResponsesBody | null {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const b = json as { model?: unknown; input?: unknown; stream?: unknown; max_output_tokens?: unknown; instructions?: unknown };
  if (typeof b?.model !== 'string' || (typeof b.input !== 'string' && !Array.isArray(b.input))) return null;
  const items =
    typeof b.input === 'string' ? [{ role: 'user', content: b.input }] : (b.input as Array<{ role?: unknown; content?: unknown; output?: unknown }>);
  const messages = [
    ...(typeof b.instructions === 'string' ? [{ role: 'system' as const, content: b.instructions }] : []),
    ...items.map((m) => ({ role: 'user' as const, content: textOf(m?.content ?? m?.output) })),
  ];
  const maxTokens = typeof b.max_output_tokens === 'number' ? Math.max(1, Math.floor(b.max_output_tokens)) : 16;
  return { model: b.model, stream: b.stream === true, maxTokens, promptTokens: countPromptTokens(messages) };
}

const usageOf = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});

const messageItem = (id: string, text: string, status: string) => ({
  type: 'message',
  id,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
  status,
});

const callItem = (id: string, callId: string, call: FakeToolCall, args: string, status: string) => ({
  type: 'function_call',
  id,
  call_id: callId,
  name: call.name,
  arguments: args,
  status,
});

const response = (id: string, model: string, status: string, output: unknown[], outputText: string, usage?: unknown) => ({
  id,
  object: 'response',
  created_at: Math.floor(Date.now() / 1000),
  status,
  model,
  output,
  output_text: outputText,
  ...(usage ? { usage } : {}),
});

/** Answers one `POST /v1/responses` on the node `node`; `toolCalls`: the model's calls instead of text. */
export function answerResponses(worker: FakeExoWorker, node: string, res: ServerResponse, body: Buffer, toolCalls: FakeToolCall[] | null): void {
  const parsed = parse(body);
  if (!parsed) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['body', 'input'], msg: 'Field required', input: null }] });
  if (worker.cluster.instancesOf(parsed.model).length === 0)
    return sendJson(res, 404, exoError(404, 'Not Found', `No instance found for model ${parsed.model}`));
  let commandId = '';
  let text = '';
  let generated = 0;

  if (!parsed.stream) {
    const sink: GenerationSink = {
      admitted: () => undefined,
      progress: () => undefined,
      token: (_i, t) => {
        generated++;
        if (!toolCalls) text += t;
      },
      finished: (reason) => {
        if (res.writableEnded || reason === 'cancelled') return;
        const calls = (toolCalls ?? []).map((c) => callItem(c.id, c.id, c, c.arguments, 'completed'));
        const output = [messageItem(`item_${commandId}`, text, 'completed'), ...calls];
        sendJson(res, 200, response(`resp_${commandId}`, parsed.model, 'completed', output, text, usageOf(parsed.promptTokens, generated)));
      },
      failed: (message) => !res.writableEnded && sendJson(res, 500, exoError(500, 'Internal Server Error', message)),
    };
    commandId = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
    res.on('close', () => !res.writableEnded && worker.cancel(commandId, node));
    return;
  }

  let keepAlive: NodeJS.Timeout | null = null;
  let seq = 1;
  let nextIndex = 0;
  let messageIndex = -1;
  const done: unknown[] = [];
  const write = (raw: string) => {
    if (res.writableEnded || res.destroyed) return;
    res.write(raw);
    keepAlive?.refresh();
  };
  const event = (type: string, data: Record<string, unknown>) =>
    write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const itemId = () => `item_${commandId}`;
  const openMessage = () => {
    messageIndex = nextIndex++;
    event('response.output_item.added', { output_index: messageIndex, item: messageItem(itemId(), '', 'in_progress') });
    event('response.content_part.added', {
      item_id: itemId(),
      output_index: messageIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
  };
  const close = () => {
    if (keepAlive) clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  };
  const end = () => {
    for (const call of toolCalls ?? []) {
      const fc = `fc_${call.id}`;
      const index = nextIndex++;
      event('response.output_item.added', { output_index: index, item: callItem(fc, `call_${call.id}`, call, '', 'in_progress') });
      event('response.function_call_arguments.delta', { item_id: fc, output_index: index, delta: call.arguments });
      event('response.function_call_arguments.done', { item_id: fc, output_index: index, name: call.name, arguments: call.arguments });
      const item = callItem(fc, `call_${call.id}`, call, call.arguments, 'completed');
      event('response.output_item.done', { output_index: index, item });
      done.push(item);
    }
    if (messageIndex < 0) openMessage();
    event('response.output_text.done', { item_id: itemId(), output_index: messageIndex, content_index: 0, text });
    event('response.content_part.done', {
      item_id: itemId(),
      output_index: messageIndex,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
    const message = messageItem(itemId(), text, 'completed');
    event('response.output_item.done', { output_index: messageIndex, item: message });
    const usage = generated > 0 ? usageOf(parsed.promptTokens, generated) : undefined;
    event('response.completed', { response: response(`resp_${commandId}`, parsed.model, 'completed', [message, ...done], text, usage) });
    close();
  };
  const sink: GenerationSink = {
    admitted: () => undefined,
    // exo's Responses stream drops prefill progress.
    progress: () => undefined,
    token: (_i, t) => {
      generated++;
      // A tool call's tokens stay with exo's parser until the call is whole.
      if (toolCalls) return;
      if (messageIndex < 0) openMessage();
      text += t;
      event('response.output_text.delta', { item_id: itemId(), output_index: messageIndex, content_index: 0, delta: t });
    },
    finished: (reason) => (reason === 'cancelled' ? close() : end()),
    // exo's generator breaks out on an ErrorChunk and ends the events as usual.
    failed: () => end(),
  };
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'close' });
  write(': keep-alive\n\n');
  commandId = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
  const initial = response(`resp_${commandId}`, parsed.model, 'in_progress', [], '');
  event('response.created', { response: initial });
  event('response.in_progress', { response: initial });
  keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
  keepAlive.unref();
  res.on('close', () => {
    if (keepAlive) clearInterval(keepAlive);
    if (!res.writableFinished) worker.cancel(commandId, node);
  });
}
