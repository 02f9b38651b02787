/**
 * `POST /v1/messages` on the proxy (Anthropic Messages): a model the attached exo serves
 * goes to exo's own Messages adapter (exo-messages-dialect.ts), with the hold, the record
 * (`api: "anthropic-messages"`) and the cancel of chat completions (exo-chat-relay.ts);
 * any other model falls through to exobar's own Messages route. exobar's refusals are in
 * Anthropic's error shape; exo's own answers keep exo's.
 */
import { z } from 'zod';
import { anthropicErrorBody, ANTHROPIC_MESSAGES_API } from '../../api/dialects/anthropic-messages/anthropic-messages-routes';
import { validateJson } from '../../api/read-json-body';
import type { RouteContext } from '../../api/route-types';
import { RoutableSchema } from './exo-chat-schema';
import { proxyChat } from './exo-chat-relay';
import { MESSAGES_DIALECT } from './exo-messages-dialect';
import type { ExoProxyContext } from './exo-proxy-context';

/**
 * What exobar checks before a Messages body goes to exo: exo's required fields
 * (`ClaudeMessagesRequest`: model, max_tokens, messages) and their types; loose
 * otherwise, exo reads more than exobar checks.
 */
export const ExoMessagesRequestSchema = z.looseObject({
  model: z.string().min(1, 'model is required').max(300),
  max_tokens: z.number().int().positive(),
  messages: z
    .array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }))
    .min(1, 'messages must hold at least one message')
    .max(10_000),
  stream: z.boolean().nullable().optional(),
});

if (MESSAGES_DIALECT.api !== ANTHROPIC_MESSAGES_API) throw new Error('the exo Messages dialect must log as the local one does');

/** The handler of `POST /v1/messages`. */
export function messagesRoute(proxy: ExoProxyContext): (ctx: RouteContext) => Promise<void> {
  return async (ctx) => {
    ctx.useErrorBody?.(anthropicErrorBody);
    const json = await ctx.body(z.unknown());
    const routable = RoutableSchema.safeParse(json);
    const source = proxy.options.source();
    if (!source || !routable.success || !proxy.exoModels().has(routable.data.model)) return proxy.delegate(ctx, json);
    const body = validateJson(json, ExoMessagesRequestSchema);
    await proxyChat(proxy, ctx, body, source, undefined, undefined, MESSAGES_DIALECT);
  };
}
