/**
 * The runner protocol: JSON lines between a supervisor and one runner process.
 *
 * stdin  (supervisor -> runner): one {@link RunnerInput} per line (tasks and cancels).
 * stdout (runner -> supervisor): one {@link RunnerOutput} per line; the first line is a Hello.
 * stderr: the runner's free-form log.
 *
 * The vocabulary is exo's (exo 0.3.70, src/exo/shared/types: tasks, events, runner
 * statuses), so a reader of exo's code finds the same names here. Prose and examples: docs/runner-protocol.md.
 */
import { z } from 'zod';
import { MAX_STOP_SEQUENCES } from './stop-sequences';

/**
 * The protocol this build speaks. 2 added prefill pacing ({@link SetPrefillPacingSchema});
 * a runner that says 1 in its hello is served as before and never sent a pacing.
 * 3 added the schedules and the prompt cache (the hello's `schedule` and `promptCache`,
 * `Usage.cachedTokens`, the PromptCacheStats event); a protocol-2 runner's hello still
 * parses, and the supervisor reads it as an `exo` runner without a cache.
 */
export const PROTOCOL_VERSION = 3;
/** The oldest protocol a runner may speak and still be served. */
export const MIN_PROTOCOL_VERSION = 1;
/** The first protocol version whose runners apply SetPrefillPacing. */
export const PACING_PROTOCOL_VERSION = 2;

/** exo's prefill chunk: a runner's chunk when no pacing asks for a smaller one (the one definition of 4096). */
export const DEFAULT_PREFILL_CHUNK_TOKENS = 4096;
/** exo's batch: requests decoding together at most (the one definition of 8 in TypeScript). */
export const MAX_DECODE_BATCH = 8;
/** The smallest prefill chunk a pacing may ask for (smaller ones cost more than they yield). */
export const MIN_PACED_CHUNK_TOKENS = 64;
/** The longest pause after a prefill chunk a pacing may ask for. */
export const MAX_PACING_PAUSE_MS = 1000;

/**
 * How a runner schedules its steps (`--schedule`):
 * - `exo`: exo's runner step for step (one waiting request admitted per step, the whole
 *   prefill inside that step): the seed's reproduction, the bench's baseline;
 * - `interleaved`: every waiting request that fits the batch is admitted at the next step,
 *   a step holds at most one prefill chunk of about `--prefill-chunk-ms` before the
 *   batch's next decode step, and cancels are read at every step.
 */
export const RunnerScheduleSchema = z.enum(['exo', 'interleaved']);
export type RunnerSchedule = z.infer<typeof RunnerScheduleSchema>;

/**
 * The sim runner's calibrated timing profiles (`--profile`, setting `runner.simProfile`):
 * `cpu-tiny` is the MLX runner measured on a tiny real model on MLX's CPU backend
 * (electron/runners/sim/sim-profiles.ts holds the figures).
 */
export const SimProfileNameSchema = z.enum(['cpu-tiny']);
export type SimProfileName = z.infer<typeof SimProfileNameSchema>;
/** A runner started without `--schedule` (and the setting's default). */
export const DEFAULT_RUNNER_SCHEDULE: RunnerSchedule = 'interleaved';
/** The interleaved prefill chunk's target duration, ms (`--prefill-chunk-ms`, and the setting's default). */
export const DEFAULT_PREFILL_CHUNK_MS = 250;
/** Bounds of `--prefill-chunk-ms` (a runner refuses others with exit 2; the setting has the same). */
export const MIN_PREFILL_CHUNK_MS = 10;
export const MAX_PREFILL_CHUNK_MS = 10_000;
/**
 * The interleaved chunk's bounds in tokens, whatever the measured prefill rate says. The
 * floor is not the pacing's (64): on a loaded CPU a 64-token chunk took 1.5-4 s, so a
 * decoding stream paused that long whatever `--prefill-chunk-ms` said. Below 16 tokens a
 * chunk's fixed cost (one forward pass) dominates: 600 tokens took 1.27x the CPU of
 * 64-token chunks in 16-token chunks and 1.6x in 8-token ones (docs/mlx-runner.md).
 */
export const MIN_INTERLEAVED_CHUNK_TOKENS = 16;
export const MAX_INTERLEAVED_CHUNK_TOKENS = DEFAULT_PREFILL_CHUNK_TOKENS;
/**
 * How prompts share an interleaved chunk (both runners): a prompt at most this many
 * chunks behind the first one arrived with it (the first one's chunk was running when it
 * came) and catches up with it, so eight prompts sent at once prefill as one group.
 */
export const CATCH_UP_CHUNKS = 2;
/**
 * Each row of a pass over several prompts takes at least this many tokens: a stacked pass
 * of a few tokens a row is slow (8 rows x 2-4 tokens: 151-160 tokens/s on this CPU, x 8: 201).
 */
export const MIN_STACKED_ROW_TOKENS = 8;

/**
 * The interleaved prefill chunk: as many tokens as the runner's measured prefill rate
 * (tokens/s) does in `chunkMs`, bounded to [16, 4096] (the contract both runners follow;
 * a fixed token count is wrong by 10x between a CPU and a Mac's GPU).
 */
export function interleavedChunkTokens(prefillTokensPerS: number, chunkMs: number): number {
  const tokens = Math.round((prefillTokensPerS * chunkMs) / 1000);
  if (!Number.isFinite(tokens)) return MAX_INTERLEAVED_CHUNK_TOKENS;
  return Math.min(MAX_INTERLEAVED_CHUNK_TOKENS, Math.max(MIN_INTERLEAVED_CHUNK_TOKENS, tokens));
}

/** What a supervisor tells a runner at spawn about its engine (the same three flags for every runner). */
export interface RunnerEngineOptions {
  schedule: RunnerSchedule;
  prefillChunkMs: number;
  /** The prompt cache's cap in bytes; 0 turns the cache off. */
  promptCacheBytes: number;
}

/** The command-line arguments that carry {@link RunnerEngineOptions} (sim and MLX runners alike). */
export function runnerEngineArgs(options: RunnerEngineOptions): string[] {
  return [
    '--schedule', options.schedule,
    '--prefill-chunk-ms', String(options.prefillChunkMs),
    '--prompt-cache-bytes', String(Math.max(0, Math.floor(options.promptCacheBytes))),
  ];
}

/** Task statuses, exo's names. */
export const TaskStatusSchema = z.enum(['Pending', 'Running', 'Complete', 'TimedOut', 'Failed', 'Cancelled']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Runner lifecycle statuses, exo's names; loading and failure carry details. */
export const RunnerStatusSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('RunnerIdle') }),
  z.object({ kind: z.literal('RunnerConnecting') }),
  z.object({ kind: z.literal('RunnerConnected') }),
  z.object({
    kind: z.literal('RunnerLoading'),
    layersLoaded: z.number().int().nonnegative(),
    totalLayers: z.number().int().positive(),
  }),
  z.object({ kind: z.literal('RunnerLoaded') }),
  z.object({ kind: z.literal('RunnerWarmingUp') }),
  z.object({ kind: z.literal('RunnerReady') }),
  z.object({ kind: z.literal('RunnerRunning') }),
  z.object({ kind: z.literal('RunnerShuttingDown') }),
  z.object({ kind: z.literal('RunnerShutdown') }),
  z.object({ kind: z.literal('RunnerFailed'), errorMessage: z.string() }),
]);
export type RunnerStatus = z.infer<typeof RunnerStatusSchema>;
export type RunnerStatusKind = RunnerStatus['kind'];

/** One tool call of the model: `arguments` is JSON text, as OpenAI's wire carries it. */
export const ToolCallSchema = z.object({
  id: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const ChatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'developer', 'tool']),
  content: z.string(),
  /** An assistant message's tool calls (an earlier turn the client sends back). */
  toolCalls: z.array(ToolCallSchema).optional(),
  /** A `tool` message's answer is to this call. */
  toolCallId: z.string().max(200).optional(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

/** A function the model may call; `parameters` is its arguments' JSON schema. */
export const ToolSpecSchema = z.object({
  name: z.string().min(1).max(200),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export type ToolSpec = z.infer<typeof ToolSpecSchema>;

/** none: no call; auto: the model decides; required: at least one call; {name}: that function. */
export const ToolChoiceSchema = z.union([z.enum(['none', 'auto', 'required']), z.object({ name: z.string().min(1).max(200) })]);
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;

/** Structured output: any JSON object, or JSON valid against `schema`. */
export const ResponseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string().optional(), schema: z.record(z.string(), z.unknown()), strict: z.boolean().optional() }),
]);
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

export const GenerationParamsSchema = z.object({
  messages: z.array(ChatMessageSchema).min(1),
  /** Upper bound on generated tokens; null lets the model stop on its own. */
  maxTokens: z.number().int().positive().nullable(),
  temperature: z.number().min(0).max(2).nullable().default(null),
  seed: z.number().int().nullable().default(null),
  /**
   * Stop sequences (OpenAI's `stop`): generation ends at the first one, which is not sent;
   * the final chunk says finish "stop". Absent or empty: none. A runner that cannot honour
   * them must not be sent any (the API refuses `stop` for its models).
   */
  stop: z.array(z.string().min(1)).max(MAX_STOP_SEQUENCES).optional(),
  /** Functions the model may call; sent only to a runner whose Hello says `features.tools`. */
  tools: z.array(ToolSpecSchema).optional(),
  toolChoice: ToolChoiceSchema.optional(),
  /** Sent only to a runner whose Hello says `features.structuredOutput`. */
  responseFormat: ResponseFormatSchema.optional(),
  /** Sampling, mlx-lm's sampler and logits processors' terms; absent: the engine's default. */
  topP: z.number().gt(0).max(1).optional(),
  topK: z.number().int().nonnegative().optional(),
  minP: z.number().min(0).max(1).optional(),
  repetitionPenalty: z.number().positive().optional(),
  presencePenalty: z.number().min(-2).max(2).optional(),
  frequencyPenalty: z.number().min(-2).max(2).optional(),
});
export type GenerationParams = z.infer<typeof GenerationParamsSchema>;

const taskId = z.string().min(1).max(200);

/** Lifecycle and generation tasks (exo: LoadModel, StartWarmup, TextGeneration, Shutdown). */
export const TaskSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('LoadModel'), taskId }),
  z.object({ kind: z.literal('StartWarmup'), taskId }),
  z.object({
    kind: z.literal('TextGeneration'),
    taskId,
    /** The API request this task serves (the completion id); chunks carry it. */
    commandId: z.string().min(1).max(200),
    params: GenerationParamsSchema,
  }),
  z.object({ kind: z.literal('Shutdown'), taskId }),
]);
export type Task = z.infer<typeof TaskSchema>;
export type TaskKind = Task['kind'];

/**
 * A cancellation by task id (exo: CancelTask). A runner only cancels tasks it has
 * admitted; one for a task it does not know is dropped, as exo's engine does.
 */
export const CancelTaskSchema = z.object({ kind: z.literal('CancelTask'), cancelledTaskId: taskId });
export type CancelTask = z.infer<typeof CancelTaskSchema>;

/**
 * How a runner prefills from its next chunk on: chunks of `chunkTokens` prompt tokens
 * (null: its own default, {@link DEFAULT_PREFILL_CHUNK_TOKENS}) and a pause of `pauseMs`
 * after each chunk but a prompt's last, in which it computes nothing (another model on
 * the same GPU gets it). `{ chunkTokens: null, pauseMs: 0 }` is full speed.
 */
export const PrefillPacingSchema = z.object({
  chunkTokens: z.number().int().min(MIN_PACED_CHUNK_TOKENS).max(DEFAULT_PREFILL_CHUNK_TOKENS).nullable(),
  pauseMs: z.number().int().min(0).max(MAX_PACING_PAUSE_MS),
});
export type PrefillPacing = z.infer<typeof PrefillPacingSchema>;

/** Full speed: the runner's own chunk, no pause. */
export const FULL_SPEED_PACING: PrefillPacing = { chunkTokens: null, pauseMs: 0 };

/**
 * Sets the runner's prefill pacing (protocol 2). Read at every prefill-chunk boundary,
 * between steps and when idle; it applies from the next chunk and is acknowledged with
 * PrefillPacingApplied. It is not a task: no TaskAcknowledged, no status.
 */
export const SetPrefillPacingSchema = z.object({
  kind: z.literal('SetPrefillPacing'),
  pacingId: taskId,
  ...PrefillPacingSchema.shape,
});
export type SetPrefillPacing = z.infer<typeof SetPrefillPacingSchema>;

/** One line on the runner's stdin. */
export const RunnerInputSchema = z.union([TaskSchema, CancelTaskSchema, SetPrefillPacingSchema]);
export type RunnerInput = z.infer<typeof RunnerInputSchema>;

export const UsageSchema = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  /**
   * Prompt tokens served from the prompt cache, not prefilled (protocol 3; absent from
   * older runners and when no cache is on). Part of `promptTokens`, never more.
   */
  cachedTokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** Generation stats sent with the final token (exo's generation_stats). */
export const GenerationStatsSchema = z.object({
  promptTps: z.number().nonnegative(),
  generationTps: z.number().nonnegative(),
  promptTokens: z.number().int().nonnegative(),
  generationTokens: z.number().int().nonnegative(),
  peakMemoryBytes: z.number().nonnegative(),
});
export type GenerationStats = z.infer<typeof GenerationStatsSchema>;

/** `tool_calls`: the request ended with a ToolCallChunk (its calls are the answer). */
export const FinishReasonSchema = z.enum(['stop', 'length', 'cancelled', 'error', 'tool_calls']);
export type FinishReason = z.infer<typeof FinishReasonSchema>;

export const ChunkSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('TokenChunk'),
    text: z.string(),
    tokenId: z.number().int(),
    /** Null until the last token of the request. */
    finishReason: FinishReasonSchema.nullable(),
    usage: UsageSchema.nullable(),
    stats: GenerationStatsSchema.nullable(),
    /**
     * With finish "stop" on the last token: the stop sequence (one of the task's `stop`)
     * that ended generation, so a client can be told which (Anthropic's `stop_sequence`).
     * Absent when the model ended on its own, and from runners that apply no stop sequences.
     */
    stopSequence: z.string().optional(),
  }),
  /**
   * After each prefill chunk. With a prompt-cache hit it counts only the tokens the runner
   * prefills: `totalTokens` is the prompt less `Usage.cachedTokens` (a hit never covers the
   * whole prompt: at least its last token is prefilled, its logits start the answer), so
   * the supervisor's prefill rate and the TTFT's prefill part follow the work really done.
   */
  z.object({
    kind: z.literal('PrefillProgressChunk'),
    processedTokens: z.number().int().nonnegative(),
    totalTokens: z.number().int().nonnegative(),
  }),
  z.object({ kind: z.literal('ErrorChunk'), errorMessage: z.string() }),
  /** Complete tool calls, sent as each is parsed; the request's last TokenChunk then says finish `tool_calls`. */
  z.object({ kind: z.literal('ToolCallChunk'), toolCalls: z.array(ToolCallSchema).min(1) }),
]);
export type Chunk = z.infer<typeof ChunkSchema>;

/**
 * The runner's first line. `fastSynch` is the value MLX will actually use, derived
 * from the environment the runner sees (exo's bootstrap lets EXO_FAST_SYNCH override
 * MLX_METAL_FAST_SYNCH; MLX parses the latter as an integer, so "true" counts as off).
 */
export const HelloSchema = z.object({
  type: z.literal('Hello'),
  protocolVersion: z.number().int(),
  engine: z.enum(['sim', 'mlx', 'test']),
  model: z.string(),
  pid: z.number().int().positive(),
  env: z.object({
    MLX_METAL_FAST_SYNCH: z.string().nullable(),
    EXO_FAST_SYNCH: z.string().nullable(),
  }),
  fastSynch: z.boolean(),
  /** The schedule the runner follows (protocol 3; a protocol-2 runner follows `exo`). */
  schedule: RunnerScheduleSchema.optional(),
  /** The runner's prompt cache (protocol 3; absent: none). */
  promptCache: z
    .object({
      /** The cap it was started with (`--prompt-cache-bytes`); 0 is off. */
      capBytes: z.number().int().nonnegative(),
      /** False when this model's cache family cannot be cached; `reason` says why. */
      supported: z.boolean(),
      reason: z.string().nullable(),
    })
    .optional(),
  /**
   * What this model can do beyond text (absent: neither). `tools`: its chat template takes
   * tools and its tokenizer declares a tool-call parser; `structuredOutput`: the runner
   * constrains decoding to `responseFormat`. The node refuses what a model cannot do.
   */
  features: z.object({ tools: z.boolean(), structuredOutput: z.boolean() }).optional(),
  /** The sim's timing profile (`--profile`); null or absent: its catalog model's own figures. */
  simProfile: SimProfileNameSchema.nullable().optional(),
});
export type Hello = z.infer<typeof HelloSchema>;

/**
 * The prompt cache's state, sent after each request's prefill when the cache is on
 * (protocol 3). Counters are since the runner started; `hitTokens` sums the prompt
 * tokens served from the cache.
 */
export const PromptCacheStatsSchema = z.object({
  type: z.literal('PromptCacheStats'),
  entries: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  capBytes: z.number().int().nonnegative(),
  hits: z.number().int().nonnegative(),
  misses: z.number().int().nonnegative(),
  hitTokens: z.number().int().nonnegative(),
});
export type PromptCacheStats = z.infer<typeof PromptCacheStatsSchema>;

export const RunnerEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('TaskAcknowledged'), taskId }),
  z.object({ type: z.literal('TaskStatusUpdated'), taskId, status: TaskStatusSchema }),
  z.object({ type: z.literal('RunnerStatusUpdated'), status: RunnerStatusSchema }),
  z.object({ type: z.literal('ChunkGenerated'), commandId: z.string(), chunk: ChunkSchema }),
  /**
   * A SetPrefillPacing took effect (protocol 2). `commandId` names the request whose
   * prefill was running when it was read (its next chunk is paced), null when the runner
   * was not prefilling.
   */
  z.object({
    type: z.literal('PrefillPacingApplied'),
    pacingId: taskId,
    ...PrefillPacingSchema.shape,
    commandId: z.string().nullable(),
  }),
  PromptCacheStatsSchema,
]);
export type RunnerEvent = z.infer<typeof RunnerEventSchema>;

/** One line on the runner's stdout. */
export const RunnerOutputSchema = z.discriminatedUnion('type', [HelloSchema, ...RunnerEventSchema.options]);
export type RunnerOutput = z.infer<typeof RunnerOutputSchema>;

/** Fault-injection prompts, like exo's debug prompts; runners honour them in any message. */
export const FAULT_PROMPTS = {
  crash: 'EXOBAR RUNNER MUST CRASH',
  hang: 'EXOBAR RUNNER MUST HANG',
} as const;

/**
 * Parses one stdout line. Returns the message or a reason, never throws: a malformed
 * line is counted and logged by the supervisor, never fatal (docs/architecture.md, invariant 5).
 */
export function parseRunnerOutputLine(line: string): { ok: true; value: RunnerOutput } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const parsed = RunnerOutputSchema.safeParse(json);
  if (!parsed.success) return { ok: false, reason: z.prettifyError(parsed.error) };
  return { ok: true, value: parsed.data };
}

/** The fast-synch value MLX will use given a runner's environment (docs/domain.md, instance types). */
export function effectiveFastSynch(env: { MLX_METAL_FAST_SYNCH?: string | null; EXO_FAST_SYNCH?: string | null }): boolean {
  // exo's runner bootstrap: EXO_FAST_SYNCH=false turns it off, any other value on.
  if (env.EXO_FAST_SYNCH != null && env.EXO_FAST_SYNCH !== '') return env.EXO_FAST_SYNCH !== 'false';
  // MLX parses the variable as an integer: "true" or garbage counts as 0.
  const raw = env.MLX_METAL_FAST_SYNCH;
  if (raw == null || raw === '') return false;
  const n = Number.parseInt(raw, 10);
  return Number.isFinite(n) && n !== 0;
}
