/**
 * Every API dialect's routes beside OpenAI's chat completions (docs/api.md): Anthropic
 * Messages, OpenAI Responses and legacy completions under /v1, and Ollama's under /api.
 * Ollama's are listed after the control routes by the server, so they can never shadow
 * one (a test checks that no path is both).
 */
import type { ModelLoader } from '../../on-demand/model-loader';
import type { ApiRoute } from '../route-types';
import { anthropicMessagesRoutes } from './anthropic-messages/anthropic-messages-routes';
import { openAiCompletionsRoutes } from './openai-completions/openai-completions-routes';
import { ollamaRoutes } from './ollama/ollama-routes';
import { openAiResponsesRoutes } from './openai-responses/openai-responses-routes';

/** The /v1 dialects. */
export function v1DialectRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return [...anthropicMessagesRoutes(options), ...openAiResponsesRoutes(options), ...openAiCompletionsRoutes(options)];
}

/** Ollama's routes (no token, like Ollama's own server). */
export function ollamaDialectRoutes(options: { loader?: ModelLoader } = {}): ApiRoute[] {
  return ollamaRoutes(options);
}
