/**
 * The fake exo's `POST /v1/messages`, as exo 0.3.70 answers it (src/exo/api/adapters/claude.py,
 * `generate_claude_stream` / `collect_claude_response`; types in src/exo/api/types/claude_api.py),
 * through the same fake worker as chat completions, so the stall, the hold and the cancel behave
 * alike. What exo does, and so this fake:
 * - a stream: `: keep-alive` first (keepalive.py) and after 10 s idle; `event: message_start`
 *   whose message id is `msg_<command id>` and whose usage is 0/0; no prefill progress (exo's
 *   Messages stream skips `PrefillProgressChunk`); a text block opened at the first token, one
 *   `content_block_delta` per token; a tool call as `content_block_start` (tool_use, input {}),
 *   one `input_json_delta` with the whole arguments, `content_block_stop`; then
 *   `content_block_stop`, `message_delta` (stop_reason, usage `{output_tokens}` only),
 *   `message_stop`. An error just ends the events (exo breaks out and closes normally). A
 *   cancelled command's stream closes with no more events.
 * - whole: one `ClaudeMessagesResponse` (id `msg_<command id>`, usage input/output tokens);
 *   a failure is a 500.
 * - 404 `No instance found for model …` before anything, as `_validate_model_has_instance`.
 * exo requires `model`, `max_tokens` and `messages` (ClaudeMessagesRequest): else FastAPI's 422.
 */
import type { ServerResponse } from 'node:http';
import { countPromptTokens } from '../../../../shared/token-count';
import { exoError, sendJson } from './exo-answers';
import type { FinishReason, GenerationSink } from './fake-runner';
import type { FakeToolCall } from './fake-tool-call';
import type { FakeExoWorker } from './fake-worker';

const KEEPALIVE_MS = 10_000;

const STOP_REASON: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };

interface MessagesBody {
  model: string;
  stream: boolean;
  maxTokens: number;
  promptTokens: number;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: { text?: unknown }) => String(b?.text ?? '')).join('\n') : '';

function parse(body: Buffer): MessagesBody | null {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const b = json as { model?: unknown; messages?: unknown; stream?: unknown; max_tokens?: unknown; system?: unknown };
  if (typeof b?.model !== 'string' || !Array.isArray(b.messages) || typeof b.max_tokens !== 'number') return null;
  const messages = [
    ...(b.system ? [{ role: 'system' as const, content: textOf(b.system) }] : []),
    ...b.messages.map((m: { role?: unknown; content?: unknown }) => ({ role: String(m?.role ?? 'user') as 'user', content: textOf(m?.content) })),
  ];
  return { model: b.model, stream: b.stream === true, maxTokens: Math.max(1, Math.floor(b.max_tokens)), promptTokens: countPromptTokens(messages) };
}

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Answers one `POST /v1/messages` on the node `node`; `toolCalls`: the model's calls instead of text. */
export function answerMessages(worker: FakeExoWorker, node: string, res: ServerResponse, body: Buffer, toolCalls: FakeToolCall[] | null): void {
  const parsed = parse(body);
  if (!parsed) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['body', 'max_tokens'], msg: 'Field required', input: null }] });
  if (worker.cluster.instancesOf(parsed.model).length === 0)
    return sendJson(res, 404, exoError(404, 'Not Found', `No instance found for model ${parsed.model}`));
  let commandId = '';
  const parts: string[] = [];
  let finish: FinishReason | null = null;
  let generated = 0;

  if (!parsed.stream) {
    const sink: GenerationSink = {
      admitted: () => undefined,
      progress: () => undefined,
      token: (_i, text, f) => {
        generated++;
        parts.push(text);
        if (f) finish = f;
      },
      finished: (reason) => {
        if (res.writableEnded || reason === 'cancelled') return;
        const content: unknown[] = toolCalls
          ? toolCalls.map((c) => ({ type: 'tool_use', id: `toolu_${c.id}`, name: c.name, input: JSON.parse(c.arguments) as unknown }))
          : [{ type: 'text', text: parts.join('') }];
        sendJson(res, 200, {
          id: `msg_${commandId}`,
          type: 'message',
          role: 'assistant',
          content,
          model: parsed.model,
          stop_reason: toolCalls ? 'tool_use' : STOP_REASON[finish ?? 'stop'],
          stop_sequence: null,
          usage: { input_tokens: parsed.promptTokens, output_tokens: generated },
        });
      },
      failed: (message) => !res.writableEnded && sendJson(res, 500, exoError(500, 'Internal Server Error', message)),
    };
    commandId = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
    res.on('close', () => !res.writableEnded && worker.cancel(commandId, node));
    return;
  }

  let keepAlive: NodeJS.Timeout | null = null;
  let textStarted = false;
  const write = (text: string) => {
    if (res.writableEnded || res.destroyed) return;
    res.write(text);
    keepAlive?.refresh();
  };
  const close = () => {
    if (keepAlive) clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  };
  const end = () => {
    let index = textStarted ? 1 : 0;
    for (const call of toolCalls ?? []) {
      write(event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${call.id}`, name: call.name, input: {} } }));
      write(event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.arguments } }));
      write(event('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    }
    if (textStarted) write(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
    if (!textStarted && !toolCalls) {
      write(event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
      write(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
    }
    const stop = toolCalls ? 'tool_use' : finish ? STOP_REASON[finish] : null;
    write(event('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: generated } }));
    write(event('message_stop', { type: 'message_stop' }));
    close();
  };
  const sink: GenerationSink = {
    admitted: () => undefined,
    // exo's Messages stream drops prefill progress.
    progress: () => undefined,
    token: (_i, text, f) => {
      generated++;
      if (f) finish = f;
      // A tool call's tokens stay with exo's parser until the call is whole.
      if (toolCalls) return;
      if (!textStarted) {
        textStarted = true;
        write(event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
      }
      write(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }));
    },
    finished: (reason) => (reason === 'cancelled' ? close() : end()),
    // exo's generator breaks out on an ErrorChunk and ends the events as usual.
    failed: () => end(),
  };
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'close' });
  write(': keep-alive\n\n');
  const started = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!;
  commandId = started.commandId;
  write(
    event('message_start', {
      type: 'message_start',
      message: {
        id: `msg_${commandId}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model: parsed.model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    }),
  );
  keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
  keepAlive.unref();
  res.on('close', () => {
    if (keepAlive) clearInterval(keepAlive);
    if (!res.writableFinished) worker.cancel(commandId, node);
  });
}
