/**
 * Checks of a chat request against the model it names, before anything reaches a runner:
 * what cannot fit in the model's context window, a counted 400 in OpenAI's shape and
 * wording. (What a model cannot honour, tools or a schema feature, its runner answers.)
 */
import type { CatalogModel } from '../../../shared/catalog';
import { countPromptTokens } from '../../../shared/token-count';
import type { SubmitRequest } from '../node/node-types';
import { rejected, type ApiError } from './api-error';

/** The first reason `model` cannot serve `request`; null when it can (or the model is unknown). */
export function refuseForModel(request: SubmitRequest, model: CatalogModel | undefined): ApiError | null {
  if (!model) return null;
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
