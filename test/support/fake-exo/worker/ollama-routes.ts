/**
 * The fake exo's Ollama API under `/ollama/`, as exo 0.3.70 serves it (src/exo/api/main.py,
 * src/exo/api/adapters/ollama.py, types in src/exo/api/types/ollama_api.py), through the same
 * fake worker as chat completions, so the stall, the hold and the cancel behave alike:
 * - `POST /ollama/api/chat`, `POST /ollama/api/generate`: `stream` is true unless the body says
 *   false. A stream is NDJSON (`application/x-ndjson`), no keep-alive and no prefill progress
 *   (the adapter skips it), one line per token (`message.content` / `response`, `done: false`);
 *   the last token's line is the closing one (`done: true`, `done_reason` stop|length,
 *   `prompt_eval_count`, `eval_count`). A tool call ends a chat stream as one line
 *   (`message.tool_calls` with `{id, type: "function", function: {name, arguments as an object,
 *   index}}`, `done_reason: "tool_call"`). An error is a last line with `done_reason: "error"`.
 *   No line carries exo's command id. A cancelled command's stream closes with no more lines.
 *   Whole: one such object; a failure is a 500.
 * - `GET /ollama/api/tags`: the downloaded models (here: the placed ones, each downloaded), digest
 *   `sha256:000000000000`; `GET /ollama/api/ps`: one entry per model with an instance, size 0.
 * - 404 `No instance found for model …` before anything, as `_validate_model_has_instance`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { countPromptTokens } from '../../../../shared/token-count';
import type { FakeExoCluster } from '../fake-cluster';
import { exoError, sendJson } from './exo-answers';
import type { FinishReason, GenerationSink } from './fake-runner';
import type { FakeToolCall } from './fake-tool-call';
import type { FakeExoWorker } from './fake-worker';

type Kind = 'chat' | 'generate';

interface OllamaBody {
  model: string;
  stream: boolean;
  maxTokens: number;
  promptTokens: number;
}

function parse(kind: Kind, body: Buffer): OllamaBody | null {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const b = json as { model?: unknown; messages?: unknown; prompt?: unknown; system?: unknown; stream?: unknown; options?: { num_predict?: unknown } | null };
  if (typeof b?.model !== 'string' || (kind === 'chat' && !Array.isArray(b.messages))) return null;
  const messages =
    kind === 'chat'
      ? (b.messages as Array<{ content?: unknown }>).map((m) => ({ role: 'user' as const, content: String(m?.content ?? '') }))
      : [...(typeof b.system === 'string' ? [{ role: 'system' as const, content: b.system }] : []), { role: 'user' as const, content: String(b.prompt ?? '') }];
  const limit = b.options?.num_predict;
  return {
    model: b.model,
    stream: b.stream !== false,
    maxTokens: typeof limit === 'number' && limit > 0 ? Math.floor(limit) : 16,
    promptTokens: countPromptTokens(messages),
  };
}

const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const doneReason = (f: FinishReason | null) => (f === 'length' ? 'length' : 'stop');

/** The line of `kind` with `text` and the rest. */
const line = (kind: Kind, model: string, text: string, rest: Record<string, unknown>) =>
  kind === 'chat'
    ? { model, created_at: now(), message: { role: 'assistant', content: text }, ...rest }
    : { model, created_at: now(), response: text, ...rest };

const toolCallsOf = (calls: FakeToolCall[]) =>
  calls.map((c, index) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.parse(c.arguments) as unknown, index } }));

/** Answers `POST /ollama/api/chat` or `/ollama/api/generate` on the node `node`; `toolCalls`: the model's calls instead of text. */
export function answerOllama(kind: Kind, worker: FakeExoWorker, node: string, res: ServerResponse, body: Buffer, toolCalls: FakeToolCall[] | null): void {
  const parsed = parse(kind, body);
  if (!parsed)
    return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['body', kind === 'chat' ? 'messages' : 'model'], msg: 'Field required', input: null }] });
  if (worker.cluster.instancesOf(parsed.model).length === 0)
    return sendJson(res, 404, exoError(404, 'Not Found', `No instance found for model ${parsed.model}`));
  const { model } = parsed;
  let commandId = '';
  let text = '';
  let generated = 0;
  const closing = (f: FinishReason | null) => {
    const counts = { prompt_eval_count: parsed.promptTokens, eval_count: generated };
    if (toolCalls && kind === 'chat')
      return {
        model,
        created_at: now(),
        message: { role: 'assistant', content: '', tool_calls: toolCallsOf(toolCalls) },
        done: true,
        done_reason: 'tool_call',
        ...counts,
      };
    return { done: true, done_reason: toolCalls ? 'stop' : doneReason(f), ...counts };
  };

  if (!parsed.stream) {
    let finish: FinishReason | null = null;
    const sink: GenerationSink = {
      admitted: () => undefined,
      progress: () => undefined,
      token: (_i, t, f) => {
        generated++;
        if (!toolCalls) text += t;
        if (f) finish = f;
      },
      finished: (reason) => {
        if (res.writableEnded || reason === 'cancelled') return;
        const end = closing(finish);
        sendJson(res, 200, 'message' in end ? end : line(kind, model, text, end));
      },
      failed: (message) => !res.writableEnded && sendJson(res, 500, exoError(500, 'Internal Server Error', message)),
    };
    commandId = worker.generate({ model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
    res.on('close', () => !res.writableEnded && worker.cancel(commandId, node));
    return;
  }

  const write = (json: unknown) => !res.writableEnded && !res.destroyed && res.write(`${JSON.stringify(json)}\n`);
  const close = () => !res.writableEnded && res.end();
  const sink: GenerationSink = {
    admitted: () => undefined,
    // exo's Ollama streams drop prefill progress.
    progress: () => undefined,
    token: (_i, t, f) => {
      generated++;
      // A tool call's tokens stay with exo's parser until the call is whole.
      if (toolCalls) return;
      // The last token's line is the closing one.
      write(line(kind, model, t, f ? closing(f) : { done: false }));
    },
    finished: (reason) => {
      if (reason !== 'cancelled' && toolCalls) {
        const end = closing(null);
        write('message' in end ? end : line(kind, model, '', end));
      }
      close();
    },
    failed: (message) => {
      write(line(kind, model, kind === 'chat' ? message : '', { done: true, done_reason: 'error' }));
      close();
    },
  };
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache', connection: 'close' });
  // Starlette sends the headers before the first line.
  res.flushHeaders();
  commandId = worker.generate({ model, promptTokens: parsed.promptTokens, maxTokens: parsed.maxTokens, apiNodeId: node, sink })!.commandId;
  res.on('close', () => !res.writableFinished && worker.cancel(commandId, node));
}

/** `GET /ollama/api/tags` and `/ollama/api/ps`, or false for another request. */
export function answerOllamaLists(cluster: FakeExoCluster, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  if (req.method !== 'GET') return false;
  const models = [...new Set([...cluster.instances.values()].map((i) => i.modelId))];
  if (path === '/ollama/api/tags') {
    sendJson(res, 200, { models: models.map((id) => ({ name: id, model: id, modified_at: now(), size: 0, digest: 'sha256:000000000000', details: {} })) });
    return true;
  }
  if (path === '/ollama/api/ps') {
    sendJson(res, 200, { models: models.map((id) => ({ name: id, model: id, size: 0 })) });
    return true;
  }
  return false;
}
