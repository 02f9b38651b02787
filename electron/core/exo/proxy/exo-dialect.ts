/**
 * What differs between the dialects exo serves, for the proxy: the path at exo, the
 * fields exo declares for it, how its stream is read for the record, and how exobar ends
 * an answer itself (a cancel, a fault) in the dialect's own shape. Everything else (the
 * hold, the record, the idle timeout, the cancel) is one implementation for all
 * (exo-chat-relay.ts). OpenAI chat completions is the first; the others live beside it
 * (exo-messages-dialect.ts).
 */
import { ApiError, errorBody } from '../../api/api-error';
import { answerCancelledChat, cancelledStreamEnding } from './cancelled-ending';
import { toExoChatBody, type ExoBody } from './exo-declared-fields';
import type { ProxiedRequest } from './exo-traffic';
import type { RouteContext } from '../../api/route-types';
import { SseTap, type SseTapEvents } from './sse-tap';

/** A reader of exo's stream bytes, after the client got them. */
export interface StreamTap {
  feed(chunk: Buffer): void;
}

/** What exobar records of a whole answer. */
export interface WholeFigures {
  commandId: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

export interface ExoDialect {
  /** The request log's `api` (shared/request-record.ts). */
  api: string;
  /** exo's path for it. */
  path: string;
  /** The content type of exo's stream, when not `text/event-stream` (Ollama's NDJSON). */
  streamContentType?: string;
  /** Only the fields exo declares; what was left out. */
  toExoBody(body: Record<string, unknown>): ExoBody;
  tap(events: SseTapEvents): StreamTap;
  /** The stream text that ends a stream exobar cancelled. */
  cancelledStreamEnding(record: ProxiedRequest): string;
  /** The stream text of a fault exobar saw (exo_stream_incomplete, exo_connection_lost, …). */
  streamError(error: ApiError): string;
  /** Answers a request exobar cancelled before exo's answer began. */
  answerCancelled(ctx: RouteContext, record: ProxiedRequest, stream: boolean): void;
  /** The figures of exo's whole answer (its parsed JSON). */
  whole(json: unknown): WholeFigures;
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** OpenAI chat completions (exo's `/v1/chat/completions`). */
export const CHAT_DIALECT: ExoDialect = {
  api: 'openai-chat',
  path: '/v1/chat/completions',
  toExoBody: toExoChatBody,
  tap: (events) => new SseTap(events),
  cancelledStreamEnding,
  streamError: (error) => `data: ${JSON.stringify(errorBody(error))}\n\n`,
  answerCancelled: answerCancelledChat,
  whole(json) {
    const j = json as { id?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | null;
    return { commandId: typeof j?.id === 'string' ? j.id : null, promptTokens: num(j?.usage?.prompt_tokens), completionTokens: num(j?.usage?.completion_tokens) };
  },
};
