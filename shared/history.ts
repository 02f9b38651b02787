/**
 * History across restarts: per model and minute (an hour once older than a day),
 * requests, errors, TTFT p50/p95, decode tokens/s p50, the queue's maximum and runner
 * restarts. `GET /api/history` answers {@link HistoryAnswer}; the page charts it.
 */
import { z } from 'zod';

export const HISTORY_RANGES = ['1h', '24h', '7d', '30d'] as const;
export const HistoryRangeSchema = z.enum(HISTORY_RANGES);
export type HistoryRange = z.infer<typeof HistoryRangeSchema>;

/** How far back each range reaches, ms. */
export const HISTORY_RANGE_MS: Record<HistoryRange, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
};

export const HistoryQuerySchema = z.strictObject({
  model: z.string().min(1).max(300).optional(),
  range: HistoryRangeSchema.default('24h'),
});

const figure = z.number().finite().nonnegative().nullable();

/** One minute (or hour) of one model. */
export const HistoryPointSchema = z.object({
  /** Epoch ms of the start of the minute or hour. */
  start: z.number(),
  spanMs: z.number(),
  requests: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  /** null when no request of the span had a first token. */
  ttftP50Ms: figure,
  ttftP95Ms: figure,
  decodeTokensPerSecondP50: figure,
  /** The most requests waiting at once, as the snapshot showed them (sampled each second). */
  queueMax: z.number().int().nonnegative(),
  restarts: z.number().int().nonnegative(),
});
export type HistoryPoint = z.infer<typeof HistoryPointSchema>;

/**
 * `slower_than_usual`: the model's TTFT p50 over the last hour is more than 1.5x its
 * median over the 7 days before, counted over the minutes of similar load.
 */
export const SlowerThanUsualSchema = z.object({
  code: z.literal('slower_than_usual'),
  model: z.string(),
  lastHourP50Ms: z.number(),
  usualP50Ms: z.number(),
  /** Requests per minute in the last hour, and the band of load the usual figure was taken over. */
  requestsPerMinute: z.number(),
  message: z.string(),
});
export type SlowerThanUsual = z.infer<typeof SlowerThanUsualSchema>;

export const HistoryModelSchema = z.object({
  model: z.string(),
  points: z.array(HistoryPointSchema),
  slowerThanUsual: SlowerThanUsualSchema.nullable(),
});
export type HistoryModel = z.infer<typeof HistoryModelSchema>;

export const HistoryAnswerSchema = z.object({
  range: HistoryRangeSchema,
  models: z.array(HistoryModelSchema),
  diskBytes: z.number().int().nonnegative(),
  diskCapBytes: z.number().int().nonnegative(),
  problem: z.string().nullable(),
});
export type HistoryAnswer = z.infer<typeof HistoryAnswerSchema>;
