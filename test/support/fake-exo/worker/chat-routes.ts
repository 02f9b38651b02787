/**
 * The fake exo's `POST /v1/chat/completions` and `POST /v1/cancel/{id}`, in exo's wire
 * format (exo 0.3.70, src/exo/api/adapters/chat_completions.py, keepalive.py; the transcript in
 * test/fixtures/exo/chat-completions-stream.sse.txt): `: keep-alive` first and after
 * 10 s idle, `: prefill_progress {...}` per chunk, `data:` chunks whose id is the
 * command id (object "chat.completion"), the final chunk with usage, `: generation_stats
 * {...}`, `data: [DONE]`; the error variant; 404 for a model with no instance; cancel
 * only on the node whose API opened the stream. `POST /v1/messages` (messages-route.ts)
 * runs through the same worker.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { countPromptTokens } from '../../../../shared/token-count';
import type { FakeExoHandler } from '../fake-exo-server';
import { exoError, sendJson } from './exo-answers';
import type { FinishReason, GenerationSink } from './fake-runner';
import type { FakeExoWorker } from './fake-worker';
import { answerMessages } from './messages-route';
import { answerResponses } from './responses-route';
import { answerOllama, answerOllamaLists } from './ollama-routes';
import type { FakeToolCall } from './fake-tool-call';

/** Ways a stream can go wrong after its first token, for the next stream only. */
export type StreamFault =
  /** The response ends without `data: [DONE]`. */
  | 'truncate'
  /** Nothing more is written (no keep-alive either); the connection stays open. */
  | 'hang'
  /** The socket is destroyed (the node went away). */
  | 'drop';

export type { FakeToolCall } from './fake-tool-call';

export interface ChatRoutes {
  handler: FakeExoHandler;
  /** Applies `fault` to the next stream that starts. */
  injectStreamFault(fault: StreamFault): void;
  /**
   * The next stream's model answers with these tool calls: its tokens are the call
   * (exo's parser keeps them), and the stream ends as exo's does (chat_completions.py,
   * ToolCallChunk): one `data:` chunk with the calls, `finish_reason: "tool_calls"` and
   * usage, then `: generation_stats`, then `data: [DONE]`.
   */
  answerWithToolCalls(calls: FakeToolCall[]): void;
}

const KEEPALIVE_MS = 10_000;
const DEFAULT_MAX_TOKENS = 16;

interface ParsedBody {
  model: string;
  stream: boolean;
  maxTokens: number;
  promptTokens: number;
}

/** What FastAPI would accept of the body; null → its 422. */
function parseBody(body: Buffer): ParsedBody | null {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  // exo declares max_tokens only (ChatCompletionRequest): OpenAI's max_completion_tokens is not read.
  const b = json as { model?: unknown; messages?: unknown; stream?: unknown; max_tokens?: unknown };
  if (typeof b?.model !== 'string' || !Array.isArray(b.messages)) return null;
  const messages = b.messages.map((m: { role?: unknown; content?: unknown }) => ({
    role: String(m?.role ?? 'user') as 'user',
    content:
      typeof m?.content === 'string' ? m.content : Array.isArray(m?.content) ? m.content.map((p: { text?: unknown }) => String(p?.text ?? '')).join('\n') : '',
  }));
  const max = typeof b.max_tokens === 'number' ? b.max_tokens : DEFAULT_MAX_TOKENS;
  return { model: b.model, stream: b.stream === true, maxTokens: Math.max(1, Math.floor(max)), promptTokens: countPromptTokens(messages) };
}

/** The chat routes of one exo node's API (`apiNodeId()`: that node's current id). */
export function fakeChatRoutes(worker: FakeExoWorker, apiNodeId: () => string = () => worker.cluster.nodeId): ChatRoutes {
  const faults: StreamFault[] = [];
  const toolAnswers: FakeToolCall[][] = [];

  const chat = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const parsed = parseBody(body);
    if (!parsed) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: null }] });
    const created = Math.floor(Date.now() / 1000);
    const node = apiNodeId();
    let commandId = '';
    const chunk = (delta: Record<string, unknown>, finish: FinishReason | 'tool_calls' | null, usage: unknown) => ({
      id: commandId,
      object: 'chat.completion',
      created,
      model: parsed.model,
      choices: [{ index: 0, delta: { role: 'assistant', ...delta }, ...(finish ? { finish_reason: finish } : {}) }],
      ...(usage ? { usage } : {}),
    });
    const usage = (completion: number) => ({
      prompt_tokens: parsed.promptTokens,
      completion_tokens: completion,
      total_tokens: parsed.promptTokens + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    const stats = (s: { promptS: number; decodeS: number }, generated: number) => ({
      prompt_tps: Math.round((parsed.promptTokens / Math.max(s.promptS, 1e-3)) * 10) / 10,
      generation_tps: Math.round((generated / Math.max(s.decodeS, 1e-3)) * 10) / 10,
      prompt_tokens: parsed.promptTokens,
      generation_tokens: generated,
      peak_memory_usage: { in_bytes: 2_147_483_648 },
      prefix_cache_hit: 'none',
    });

    if (!parsed.stream) {
      const parts: string[] = [];
      let finish: FinishReason = 'stop';
      const sink: GenerationSink = {
        admitted: () => undefined,
        progress: () => undefined,
        token: (_i, text, f) => {
          parts.push(text);
          if (f) finish = f;
        },
        finished: () => {
          if (res.writableEnded) return;
          sendJson(res, 200, {
            id: commandId,
            object: 'chat.completion',
            created,
            model: parsed.model,
            choices: [{ index: 0, message: { role: 'assistant', content: parts.join('') }, finish_reason: finish }],
            usage: usage(parts.length),
          });
        },
        failed: (message) => !res.writableEnded && sendJson(res, 500, exoError(500, 'Internal Server Error', message)),
      };
      const started = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink });
      if (!started) return sendJson(res, 404, exoError(404, 'Not Found', `No instance found for model ${parsed.model}`));
      commandId = started.commandId;
      res.on('close', () => !res.writableEnded && worker.cancel(commandId, node));
      return;
    }

    const fault = faults.shift() ?? null;
    const toolCalls = toolAnswers.shift() ?? null;
    let dead = false;
    let generated = 0;
    let keepAlive: NodeJS.Timeout | null = null;
    const write = (text: string) => {
      if (dead || res.writableEnded || res.destroyed) return;
      res.write(text);
      if (keepAlive) keepAlive.refresh();
    };
    const close = () => {
      if (keepAlive) clearInterval(keepAlive);
      if (!dead && !res.writableEnded) res.end();
    };
    const afterFirstToken = () => {
      if (!fault) return false;
      dead = true;
      if (keepAlive) clearInterval(keepAlive);
      if (fault === 'truncate') res.end();
      else if (fault === 'drop') res.socket?.destroy();
      return true;
    };
    const sink: GenerationSink = {
      admitted: () => undefined,
      progress: (processed, total) =>
        write(`: prefill_progress ${JSON.stringify({ PrefillProgressChunk: { model: parsed.model, processed_tokens: processed, total_tokens: total } })}\n\n`),
      token: (_i, text, finish) => {
        generated++;
        // A tool call's tokens stay with exo's parser until the call is whole.
        if (!toolCalls) write(`data: ${JSON.stringify(chunk({ content: text }, finish, finish ? usage(generated) : null))}\n\n`);
        if (generated === 1) afterFirstToken();
      },
      finished: (reason, s) => {
        // A cancelled command's stream just closes: no finish reason, no generation_stats,
        // no [DONE], and before the cancel is answered (test/fixtures/exo/real/stream-cancelled.sse.txt).
        if (reason === 'cancelled') return close();
        if (toolCalls) {
          // ToolCall(id, index, function=ToolCallItem): the function carries the call's id too.
          const deltas = toolCalls.map((call, index) => ({
            id: call.id,
            index,
            type: 'function',
            function: { id: call.id, name: call.name, arguments: call.arguments },
          }));
          write(`data: ${JSON.stringify(chunk({ tool_calls: deltas }, 'tool_calls', usage(generated)))}\n\n`);
        }
        write(`: generation_stats ${JSON.stringify(stats(s, generated))}\n\n`);
        write('data: [DONE]\n\n');
        close();
      },
      failed: (message) => {
        write(`data: ${JSON.stringify({ error: { message, type: 'InternalServerError', code: 500 } })}\n\n`);
        write('data: [DONE]\n\n');
        close();
      },
    };
    if (worker.cluster.instancesOf(parsed.model).length === 0)
      return sendJson(res, 404, exoError(404, 'Not Found', `No instance found for model ${parsed.model}`));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    write(': keep-alive\n\n');
    // The fixed worker may hand the task over (and the runner report progress) at once.
    commandId = worker.generate({ model: parsed.model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
    keepAlive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
    keepAlive.unref();
    // A client that goes away cancels the command, as exo's stream generator does.
    res.on('close', () => {
      if (keepAlive) clearInterval(keepAlive);
      if (!res.writableFinished) worker.cancel(commandId, node);
    });
  };

  const cancel = (res: ServerResponse, id: string): void => {
    // exo closes the stream of a cancelled command first, then answers (api/main.py cancel_command).
    if (!worker.cancel(id, apiNodeId())) return sendJson(res, 404, exoError(404, 'Not Found', 'Command not found or already completed'));
    sendJson(res, 200, { message: 'Command cancelled.', command_id: id });
  };

  return {
    injectStreamFault: (fault) => faults.push(fault),
    answerWithToolCalls: (calls) => toolAnswers.push(calls),
    handler(req, res, url, body) {
      if (answerOllamaLists(worker.cluster, req, res, url.pathname)) return true;
      if (req.method !== 'POST') return false;
      if (url.pathname === '/ollama/api/chat' || url.pathname === '/ollama/api/generate') {
        answerOllama(url.pathname.endsWith('chat') ? 'chat' : 'generate', worker, apiNodeId(), res, body, toolAnswers.shift() ?? null);
        return true;
      }
      if (url.pathname === '/v1/chat/completions') {
        chat(req, res, body);
        return true;
      }
      if (url.pathname === '/v1/messages') {
        answerMessages(worker, apiNodeId(), res, body, toolAnswers.shift() ?? null);
        return true;
      }
      if (url.pathname === '/v1/responses') {
        answerResponses(worker, apiNodeId(), res, body, toolAnswers.shift() ?? null);
        return true;
      }
      const match = /^\/v1\/cancel\/([^/]+)$/.exec(url.pathname);
      if (match) {
        cancel(res, decodeURIComponent(match[1]!));
        return true;
      }
      return false;
    },
  };
}
