/**
 * The transparent proxy to an attached exo, as a route layer registered before the
 * OpenAI routes (the API server's `extraRoutes`): a request for a model the attached
 * exo serves goes to that exo node; anything else falls through to exobar's own
 * OpenAI routes, unchanged. This file is the table; each route is a module of its own:
 *
 * - `POST /v1/chat/completions` (exo-chat-route.ts, exo-chat-relay.ts,
 *   exo-whole-relay.ts, exo-stream-relay.ts): streams pass through byte for byte as they
 *   arrive (exo's comments included); exo's errors keep their status and shape; a whole
 *   answer is exo's body. Each request is recorded (`ExoTraffic`) and, with the
 *   hold on, waits in exobar's queue while its model prefills another stream.
 * - `POST /v1/messages` (exo-messages-route.ts, exo-messages-dialect.ts): Anthropic Messages
 *   by exo's own adapter, with chat's hold, record and cancel (`msg_<command id>` cancels).
 * - `POST /v1/responses` (exo-responses-route.ts, exo-responses-dialect.ts): OpenAI Responses
 *   by exo's own adapter, likewise (`resp_<command id>` cancels).
 * - `POST /api/chat`, `POST /api/generate` (exo-ollama-route.ts, exo-ollama-dialect.ts): exobar's
 *   Ollama API, by exo's own adapter under `/ollama/api/…`, likewise; `GET /api/tags`, `/api/ps`
 *   list exo's models beside the local ones.
 * - `POST /v1/completions`, `POST /v1/messages/count_tokens` (exo-unserved-route.ts): exo
 *   does not serve them; for an exo model, 404 naming what exo serves.
 * - `GET /v1/models` (exo-models-route.ts): exobar's own models and the exo models (exo's model ids).
 * - `POST /v1/cancel/{id}` (exo-cancel-route.ts): an exo request's cancel goes to the exo
 *   node that received it (exo cancels only there); the answer says whether exo took it.
 * - any other `/v1/…` exo has (exo-passthrough-route.ts): passed through.
 *
 * Faults (exo 404/500, a stream without [DONE], a hung stream, the node gone mid-
 * stream) reach the client as OpenAI-shaped errors and the record says why.
 */
import type { ApiRoute, HttpMethod } from '../../api/route-types';
import { cancelRoute } from './exo-cancel-route';
import { chatRoute } from './exo-chat-route';
import { messagesRoute } from './exo-messages-route';
import { responsesRoute } from './exo-responses-route';
import { ollamaListRoute, ollamaRoute } from './exo-ollama-route';
import { unservedRoute } from './exo-unserved-route';
import { anthropicErrorBody } from '../../api/dialects/anthropic-messages/anthropic-messages-routes';
import { modelsRoute } from './exo-models-route';
import { passThroughRoute } from './exo-passthrough-route';
import { createProxyContext } from './exo-proxy-context';
import type { ExoProxyOptions } from './exo-proxy-options';

export { DEFAULT_EXO_IDLE_TIMEOUT_MS, exoModelsOf, type ExoPlacer, type ExoProxyOptions } from './exo-proxy-options';

/** The proxy's routes; register them before exobar's own (`extraRoutes`). */
export function exoProxyRoutes(options: ExoProxyOptions): ApiRoute[] {
  const proxy = createProxyContext(options);
  const passThrough = passThroughRoute(proxy);
  const methods: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
  return [
    { method: 'POST', path: '/v1/chat/completions', auth: false, handle: chatRoute(proxy) },
    { method: 'POST', path: '/v1/messages', auth: false, handle: messagesRoute(proxy) },
    { method: 'POST', path: '/v1/responses', auth: false, handle: responsesRoute(proxy) },
    { method: 'POST', path: '/v1/messages/count_tokens', auth: false, handle: unservedRoute(proxy, anthropicErrorBody) },
    { method: 'POST', path: '/v1/completions', auth: false, handle: unservedRoute(proxy) },
    { method: 'GET', path: '/v1/models', auth: false, handle: modelsRoute(proxy) },
    { method: 'POST', path: '/api/chat', auth: false, handle: ollamaRoute(proxy, 'chat') },
    { method: 'POST', path: '/api/generate', auth: false, handle: ollamaRoute(proxy, 'generate') },
    { method: 'GET', path: '/api/tags', auth: false, handle: ollamaListRoute(proxy, 'tags') },
    { method: 'GET', path: '/api/ps', auth: false, handle: ollamaListRoute(proxy, 'ps') },
    { method: 'POST', path: '/v1/cancel/:id', auth: false, handle: cancelRoute(proxy) },
    ...methods.map((method) => ({ method, path: '/v1/:rest*', auth: false, handle: passThrough })),
  ];
}
