/**
 * Checks a snapshot that came over the network before the store takes it: a proxy's
 * error page or a server of another version must become a clear connection error, not
 * a blank page. Loose objects, so fields added to the contract later pass through.
 */
import { z } from 'zod';
import { RunnerStatusSchema } from '../../../shared/runner-protocol';
import type { Snapshot } from '../../../shared/snapshot';

const ms = z.number().finite();
const nullableMs = ms.nullable();

const TtftSampleSchema = z.looseObject({
  requestId: z.string(),
  at: ms,
  totalMs: ms,
  waitMs: ms,
  prefillMs: ms,
  firstTokenMs: ms,
  promptTokens: z.number(),
});

const InstanceSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  modelName: z.string(),
  engine: z.string(),
  simulated: z.boolean(),
  instanceType: z.enum(['ring', 'jaccl']),
  runner: z.looseObject({
    status: RunnerStatusSchema,
    pid: z.number().nullable(),
    restarts: z.number(),
    lastExit: z
      .looseObject({ code: z.number().nullable(), signal: z.string().nullable(), reason: z.string(), at: ms })
      .nullable(),
    malformedLines: z.number(),
  }),
  fastSynch: z.looseObject({
    override: z.enum(['auto', 'on', 'off']),
    enabled: z.boolean(),
    reason: z.string(),
    reported: z.boolean().nullable(),
  }),
  queue: z.looseObject({
    capacity: z.number(),
    requests: z.array(
      z.looseObject({
        id: z.string(),
        phase: z.enum(['queued', 'awaiting_ack', 'prefilling', 'decoding', 'cancelling']),
        ageMs: ms,
        promptTokens: z.number(),
        completionTokens: z.number(),
      }),
    ),
  }),
  prefill: z
    .looseObject({ requestId: z.string(), processedTokens: z.number(), totalTokens: z.number(), etaMs: nullableMs })
    .nullable(),
  pendingCancels: z.array(z.looseObject({ requestId: z.string(), state: z.enum(['held', 'sent']), ageMs: ms })),
  ttft: z.looseObject({
    samples: z.array(TtftSampleSchema),
    p50Ms: nullableMs,
    p95Ms: nullableMs,
    latest: TtftSampleSchema.nullable(),
  }),
  tokensPerSecond: z.number().nullable(),
  counters: z.looseObject({ completed: z.number(), failed: z.number(), cancelled: z.number(), rejected: z.number() }),
});

const MlxRuntimeSchema = z.looseObject({
  available: z.boolean(),
  supported: z.boolean(),
  python: z.string().nullable(),
  version: z.string().nullable(),
  reason: z.string(),
  localModels: z.number(),
  setup: z
    .looseObject({
      state: z.enum(['running', 'done', 'failed']),
      step: z.string(),
      message: z.string(),
      outputTail: z.array(z.string()),
      error: z.string().nullable(),
    })
    .nullable(),
});

export const SnapshotSchema = z.looseObject({
  seq: z.number(),
  at: ms,
  version: z.string(),
  apiBaseUrl: z.string().nullable(),
  instances: z.array(InstanceSchema),
  warnings: z.array(
    z.looseObject({
      code: z.string(),
      instanceIds: z.array(z.string()),
      title: z.string(),
      risk: z.string(),
      fix: z.string(),
    }),
  ),
  launch: z
    .looseObject({
      state: z.enum(['running', 'done', 'failed']),
      step: z.string(),
      models: z.array(z.string()),
      current: z.number(),
      error: z.string().nullable(),
      startedAt: ms,
    })
    .nullable(),
  rejectedInputs: z.record(z.string(), z.number()),
  // Optional: a server from before the MLX engine sends none.
  mlx: MlxRuntimeSchema.nullable().optional(),
});

/** Parses a snapshot from JSON text; throws an Error that says what was wrong. */
export function parseSnapshot(json: string): Snapshot {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error('The server sent a snapshot that is not JSON');
  }
  const result = SnapshotSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`The server sent a snapshot this page does not understand (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`);
  }
  return result.data as unknown as Snapshot;
}
