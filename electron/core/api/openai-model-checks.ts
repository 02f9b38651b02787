/**
 * Checks of a chat request against the model it names, before anything reaches a runner:
 * what the model's engine cannot do and what cannot fit in the model's context window.
 * Both are counted 400s in OpenAI's shape; OpenAI's own wording where it has one.
 */
import type { CatalogModel } from '../../../shared/catalog';
import { countPromptTokens } from '../../../shared/token-count';
import type { SubmitRequest } from '../node/node-types';
import { rejected, type ApiError } from './api-error';

/** The first reason `model` cannot serve `request`; null when it can (or the model is unknown). */
export function refuseForModel(request: SubmitRequest, model: CatalogModel | undefined): ApiError | null {
  if (!model) return null;
  if (model.engine === 'mlx' && request.stop && request.stop.length > 0) {
    return rejected(
      400,
      'unsupported_parameter',
      `Unsupported parameter: 'stop' is not supported with ${model.id}: the MLX runner does not apply stop sequences yet (the simulated models do); cut the answer on the client side.`,
      'stop',
    );
  }
  return model.contextLength ? refuseOverContext(request, model.contextLength) : null;
}

/**
 * OpenAI's `context_length_exceeded`: the prompt alone, or the prompt plus the requested
 * completion, does not fit. Prompt tokens are counted as the node counts them
 * (shared/token-count.ts): exact for the sim; for an MLX model a lower bound of its
 * tokenizer's count (every word is at least one token), so nothing that fits is refused.
 */
function refuseOverContext(request: SubmitRequest, contextLength: number): ApiError | null {
  const promptTokens = countPromptTokens(request.messages);
  const completionTokens = request.maxTokens ?? 0;
  if (promptTokens + completionTokens <= contextLength) return null;
  const message =
    promptTokens > contextLength || completionTokens === 0
      ? `This model's maximum context length is ${contextLength} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`
      : `This model's maximum context length is ${contextLength} tokens. However, you requested ${promptTokens + completionTokens} tokens ` +
        `(${promptTokens} in the messages, ${completionTokens} in the completion). Please reduce the length of the messages or completion.`;
  return rejected(400, 'context_length_exceeded', message, 'messages');
}
