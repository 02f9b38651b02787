/**
 * One ended request as exobar records it, local or proxied to exo: what the request log
 * keeps, `/api/requests` answers and the page's Requests view shows. Numbers and names
 * only: never the prompt or the answer. A figure exobar could not measure is null
 * (unknown), never invented.
 */
import { z } from 'zod';

/** How a request ended: done, cancelled (with who asked) or failed (with its error code). */
export const RequestOutcomeSchema = z.enum(['done', 'cancelled', 'failed']);
export type RequestOutcome = z.infer<typeof RequestOutcomeSchema>;

/**
 * Who cancelled: the client that went away, a client's `POST /v1/cancel/{id}`, or
 * exobar itself (a relaunch with "cancel", a stop); null where not cancelled or not known.
 */
export const CancelledBySchema = z.enum(['client_disconnect', 'cancel_api', 'exobar']);
export type CancelledBy = z.infer<typeof CancelledBySchema>;

export const RequestSourceSchema = z.enum(['local', 'exo']);
export type RequestSource = z.infer<typeof RequestSourceSchema>;

const ms = z.number().finite().nonnegative();
const rate = z.number().finite().nonnegative();

export const RequestRecordSchema = z.object({
  /** The completion id a client saw (local: chatcmpl-…; exo: exo's command id, else exobar's own id). */
  id: z.string(),
  /** Epoch ms of arrival at exobar. */
  at: z.number().finite(),
  /** Epoch ms of the end. */
  endedAt: z.number().finite(),
  model: z.string(),
  /** exobar's instance id (local) or exo's instance id; null when exo never said. */
  instance: z.string().nullable(),
  source: RequestSourceSchema,
  /** The Mac that served it: "local" for this one, else exo's node name or id; null when not known. */
  node: z.string().nullable(),
  /** The client's User-Agent; null when it sent none. */
  client: z.string().nullable(),
  /**
   * The API dialect it came in by (`openai-chat`, `openai-completions`, `openai-responses`,
   * `anthropic-messages`, `ollama-chat`, `ollama-generate`); null when not known (older rows: null).
   */
  api: z.string().max(40).nullable().default(null),
  promptTokens: z.number().int().nonnegative(),
  /** Prompt tokens served from a prefix cache, where the engine says; null when unknown. */
  cachedTokens: z.number().int().nonnegative().nullable(),
  outputTokens: z.number().int().nonnegative(),
  /** Time to first token and its parts (they add up to it); null without a first token. */
  ttftMs: ms.nullable(),
  /** Arrival until its model was loaded, for a request that waited for a load (on request, or a placement on exo); null otherwise (older rows: null). */
  loadMs: ms.nullable().default(null),
  waitMs: ms.nullable(),
  /** Waiting in the runner: acknowledged until the runner began its prefill, its turn behind earlier prompts; null where not measured (exo, older rows). */
  runnerWaitMs: ms.nullable().default(null),
  prefillMs: ms.nullable(),
  firstTokenMs: ms.nullable(),
  prefillTokensPerSecond: rate.nullable(),
  decodeTokensPerSecond: rate.nullable(),
  itlP95Ms: ms.nullable(),
  outcome: RequestOutcomeSchema,
  cancelledBy: CancelledBySchema.nullable(),
  /** The error code of a failed request (runner_crashed, exo_unreachable, …); null otherwise. */
  errorCode: z.string().nullable(),
});
export type RequestRecord = z.infer<typeof RequestRecordSchema>;

/**
 * A model's load or unload (or another lifecycle step a part of exobar wants beside the
 * requests, e.g. an on-demand load before a request): kept in the request log, answered
 * by `/api/requests` in `events`.
 */
export const ModelEventRecordSchema = z.object({
  kind: z.literal('model_event'),
  /** Epoch ms. */
  at: z.number().finite(),
  model: z.string(),
  instance: z.string().nullable(),
  /** What happened: `load`, `unload`, or another short word. */
  event: z.string().min(1).max(40),
  /** Why, in words (`on demand for a request`, `idle 10 min`); null when not said. */
  reason: z.string().max(300).nullable(),
  /** How long it took, where it took time; null otherwise. */
  durationMs: ms.nullable(),
});
export type ModelEventRecord = z.infer<typeof ModelEventRecordSchema>;

/** The CSV's columns, in order: every field of a record. */
export const REQUEST_RECORD_COLUMNS = Object.keys(RequestRecordSchema.shape) as (keyof RequestRecord)[];

/** `GET /api/requests` query: filters, newest first, at most `limit`. */
export const RequestQuerySchema = z.strictObject({
  model: z.string().min(1).max(300).optional(),
  source: RequestSourceSchema.optional(),
  outcome: RequestOutcomeSchema.optional(),
  /** Epoch ms, or an ISO 8601 time: only requests that arrived at or after it. */
  since: z
    .string()
    .min(1)
    .max(40)
    .transform((value, ctx) => {
      const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
      if (!Number.isFinite(n)) {
        ctx.addIssue({ code: 'custom', message: 'since is epoch milliseconds or an ISO 8601 time' });
        return z.NEVER;
      }
      return n;
    })
    .optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
});
export type RequestQuery = z.infer<typeof RequestQuerySchema>;

/** `GET /api/requests`'s answer. */
export const RequestListSchema = z.object({
  requests: z.array(RequestRecordSchema),
  /** Loads and unloads in the same window (model and since filters apply), newest first. */
  events: z.array(ModelEventRecordSchema),
  /** Records the log holds in all (before the filters). */
  total: z.number().int().nonnegative(),
  /** The log's file size on disk and its cap. */
  diskBytes: z.number().int().nonnegative(),
  diskCapBytes: z.number().int().nonnegative(),
  /** Set when the stored log was unreadable or corrupt at start: what happened (it was set aside, a new one started). */
  problem: z.string().nullable(),
});
export type RequestList = z.infer<typeof RequestListSchema>;

/** True when the record passes the query's filters (limit aside). */
export function matchesRequestQuery(record: RequestRecord, query: Omit<RequestQuery, 'limit'>): boolean {
  if (query.model !== undefined && record.model !== query.model) return false;
  if (query.source !== undefined && record.source !== query.source) return false;
  if (query.outcome !== undefined && record.outcome !== query.outcome) return false;
  if (query.since !== undefined && record.at < query.since) return false;
  return true;
}
