/**
 * `POST /v1/responses` on the proxy (OpenAI Responses): a model the attached exo serves goes
 * to exo's own Responses adapter (exo-responses-dialect.ts), with the hold, the record
 * (`api: "openai-responses"`) and the cancel of chat completions (exo-chat-relay.ts); any
 * other model falls through to exobar's own Responses route. exobar's refusals are
 * OpenAI-shaped; exo's own answers keep exo's.
 */
import { z } from 'zod';
import { OPENAI_RESPONSES_API } from '../../api/dialects/openai-responses/openai-responses-routes';
import { validateJson } from '../../api/read-json-body';
import type { RouteContext } from '../../api/route-types';
import { RoutableSchema } from './exo-chat-schema';
import { proxyChat } from './exo-chat-relay';
import { RESPONSES_DIALECT } from './exo-responses-dialect';
import type { ExoProxyContext } from './exo-proxy-context';

/**
 * What exobar checks before a Responses body goes to exo: exo's required fields
 * (`ResponsesRequest`: model, input as text or a list of items) and the types of the ones
 * exobar reads; loose otherwise, exo reads more than exobar checks.
 */
export const ExoResponsesRequestSchema = z.looseObject({
  model: z.string().min(1, 'model is required').max(300),
  input: z.union([z.string(), z.array(z.looseObject({})).min(1, 'input must hold at least one item').max(10_000)]),
  stream: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().finite().nullable().optional(),
  top_p: z.number().finite().nullable().optional(),
});

if (RESPONSES_DIALECT.api !== OPENAI_RESPONSES_API) throw new Error('the exo Responses dialect must log as the local one does');

/** The handler of `POST /v1/responses`. */
export function responsesRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    const source = proxy.options.source();
    if (!source || !routable.success || !proxy.exoModels().has(routable.data.model)) return proxy.delegate(ctx, json);
    const body = validateJson(json, ExoResponsesRequestSchema);
    await proxyChat(proxy, ctx, body, source, undefined, undefined, RESPONSES_DIALECT);
  };
}
