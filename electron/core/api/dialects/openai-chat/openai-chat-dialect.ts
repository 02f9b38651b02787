/**
 * OpenAI's chat completions as a dialect of the one chat pipeline (chat/serve-chat.ts):
 * the whole `chat.completion`, or its `chat.completion.chunk` stream with exo's
 * `: prefill_progress {...}` and `: generation_stats {...}` comments and `data: [DONE]`.
 * A failure after the stream started is sent as `data: {"error": {...}}` (OpenAI clients
 * raise it) and the stream ends without [DONE].
 */
import { errorBody } from '../../api-error';
import type { Dialect } from '../../chat/serve-chat';
import { completionBody, contentChunk, finishChunk, generationStatsPayload, roleChunk, toolCallChunk, usageChunk } from '../../openai-format';
import { SseStream } from '../../sse-stream';

export const OPENAI_CHAT_API = 'openai-chat';

export const openAiChatDialect: Dialect = {
  api: OPENAI_CHAT_API,
  whole(ctx, handle, answer) {
    ctx.json(200, completionBody(handle, answer.text, answer.finishReason, answer.usage, answer.toolCalls));
  },
  stream(ctx, handle) {
    const sse = new SseStream(ctx.res);
    let calls = 0;
    return {
      open() {
        sse.open();
        sse.data(roleChunk(handle));
      },
      text: (text) => sse.data(contentChunk(handle, text)),
      toolCalls(toolCalls) {
        sse.data(toolCallChunk(handle, toolCalls, calls));
        calls += toolCalls.length;
      },
      progress: (processed, total) => sse.comment(`prefill_progress ${JSON.stringify({ processed_tokens: processed, total_tokens: total })}`),
      end(end) {
        sse.data(finishChunk(handle, end.finishReason));
        sse.data(usageChunk(handle, end.usage));
        if (end.stats) sse.comment(`generation_stats ${JSON.stringify(generationStatsPayload(end.stats))}`);
        sse.data('[DONE]');
        sse.end();
      },
      fail(error) {
        sse.data(errorBody(error));
        sse.end();
      },
    };
  },
};
