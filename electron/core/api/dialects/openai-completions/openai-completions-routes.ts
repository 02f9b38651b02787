/**
 * OpenAI's legacy completions, `POST /v1/completions`, for local models: the prompt as
 * one user turn of the node's one chat request (chat/serve-chat.ts), the answer as a
 * `text_completion` or its stream of `data:` chunks ending in `[DONE]`.
 */
import { CompletionsRequestSchema, type CompletionsRequest } from '../../../../../shared/dialect-openai-completions';
import type { ModelLoader } from '../../../on-demand/model-loader';
import { errorBody } from '../../api-error';
import { serveChat, type ChatFinishReason, type Dialect } from '../../chat/serve-chat';
import { generationStatsPayload, openAiUsage } from '../../openai-format';
import { stopSequences } from '../../openai-schemas';
import type { RequestHandle } from '../../../node/node-types';
import type { ApiRoute, RouteContext } from '../../route-types';
import { SseStream } from '../../sse-stream';

export const OPENAI_COMPLETIONS_API = 'openai-completions';

/** OpenAI's default `max_tokens` for legacy completions. */
const DEFAULT_MAX_TOKENS = 16;

function chunk(handle: RequestHandle, text: string, finish: ChatFinishReason | null) {
  return { id: handle.id, object: 'text_completion', created: handle.created, model: handle.model, choices: [{ text, index: 0, logprobs: null, finish_reason: finish }] };
}

const completionsDialect: Dialect = {
  api: OPENAI_COMPLETIONS_API,
  whole(ctx, handle, answer) {
    ctx.json(200, { ...chunk(handle, answer.text, answer.finishReason), usage: openAiUsage(answer.usage) });
  },
  stream(ctx, handle) {
    const sse = new SseStream(ctx.res);
    return {
      open: () => sse.open(),
      text: (text) => sse.data(chunk(handle, text, null)),
      // The model's calls have no place in a text completion: tools are not taken here.
      toolCalls: () => undefined,
      progress: (processed, total) => sse.comment(`prefill_progress ${JSON.stringify({ processed_tokens: processed, total_tokens: total })}`),
      end(end) {
        sse.data(chunk(handle, '', end.finishReason));
        sse.data({ ...chunk(handle, '', null), choices: [], usage: openAiUsage(end.usage) });
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

async function completions(ctx: RouteContext, loader: ModelLoader | undefined): Promise<void> {
  const body: CompletionsRequest = await ctx.body(CompletionsRequestSchema);
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
  await serveChat(
    ctx,
    loader,
    {
      api: OPENAI_COMPLETIONS_API,
      model: body.model,
      messages: [{ role: 'user', content: prompt }],
      maxTokens: body.max_tokens === undefined ? DEFAULT_MAX_TOKENS : body.max_tokens,
      temperature: body.temperature ?? null,
      seed: body.seed ?? null,
      stop: stopSequences(body.stop),
      ...(body.top_p != null ? { topP: body.top_p } : {}),
      ...(body.presence_penalty != null ? { presencePenalty: body.presence_penalty } : {}),
      ...(body.frequency_penalty != null ? { frequencyPenalty: body.frequency_penalty } : {}),
      stream: body.stream === true,
      arrivedAt: ctx.arrivedAt,
    },
    completionsDialect,
  );
}

export function openAiCompletionsRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return [{ method: 'POST', path: '/v1/completions', auth: false, handle: (ctx) => completions(ctx, options.loader) }];
}
