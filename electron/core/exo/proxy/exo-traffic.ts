/**
 * What exobar measures of the requests it proxies to exo: one record per request with
 * its phase, prefill progress (from exo's `: prefill_progress` comments), TTFT split
 * into parts, tokens/s and exo's `generation_stats`. exo shows none of this itself,
 * and only the stream of the client that sent a request carries it, so exobar knows
 * it for its own traffic only; exo tasks it did not proxy are "not observed".
 *
 * The integrator reads it through {@link ExoTraffic.instanceView} (the snapshot's
 * RequestSnapshot, PrefillSnapshot, TtftSnapshot shapes) and {@link ExoTraffic.isObserved}.
 *
 * A record's `phase` is a read-only projection of the request's one state machine
 * (proxied-request-state.ts), which the traffic follows ({@link ExoTraffic.follow}) and
 * never writes: the traffic only measures (progress and tokens refine "sent to exo" into
 * prefilling and generating).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CancelledBySchema } from '../../../../shared/request-record';
import type { PrefillSnapshot, RequestPhase, RequestSnapshot, TtftSample, TtftSnapshot } from '../../../../shared/snapshot';
import { percentile, TTFT_WINDOW } from '../../../../shared/stats';
import { DecodeTiming, NO_DECODE, type DecodeStats, type TokenGap } from '../../sharing/decode-timing';
import type { ExoReading } from '../attach/exo-client';
import type { ProxiedEnd, ProxiedRequestPhase } from './proxied-request-state';

/**
 * Where a proxied request is. `loading`: held while exobar places its model on exo
 * (`exo.placeOnDemand`); `held`: in exobar's own queue (the hold), not yet sent to exo.
 */
export const ProxiedPhaseSchema = z.enum(['loading', 'held', 'sent', 'prefilling', 'generating', 'done', 'failed', 'cancelled']);
export type ProxiedPhase = z.infer<typeof ProxiedPhaseSchema>;

/** exo's `: generation_stats {...}` payload (snake_case, as exo writes it); extra keys kept. */
export const GenerationStatsSchema = z.looseObject({
  prompt_tps: z.number().optional(),
  generation_tps: z.number().optional(),
  prompt_tokens: z.number().optional(),
  generation_tokens: z.number().optional(),
  peak_memory_usage: z.looseObject({ in_bytes: z.number() }).optional(),
  prefix_cache_hit: z.string().optional(),
});
export type GenerationStats = z.infer<typeof GenerationStatsSchema>;

/** One proxied request as the bundle and the API show it (times in epoch ms). */
export const ProxiedRequestSchema = z.object({
  /** exobar's id while exo's command id is unknown (held), then exo's command id. */
  id: z.string(),
  commandId: z.string().nullable(),
  model: z.string(),
  exoInstanceId: z.string().nullable(),
  /** The exo node's API that received it (exo cancels only there). */
  upstreamUrl: z.string(),
  stream: z.boolean(),
  phase: ProxiedPhaseSchema,
  arrivedAt: z.number(),
  /** Milliseconds it waited in exobar's hold. */
  heldMs: z.number(),
  /** Epoch ms its model's placement on demand ended (runners ready); null when it waited for none. */
  loadedAt: z.number().nullable().optional(),
  sentAt: z.number().nullable(),
  firstProgressAt: z.number().nullable(),
  lastProgressAt: z.number().nullable(),
  firstTokenAt: z.number().nullable(),
  lastTokenAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  /** exo's prefill progress: what it has read of the prompt and the whole it will read (one token less than the prompt, the real captures show). */
  processedTokens: z.number(),
  totalTokens: z.number(),
  /** The prompt's tokens as exo's usage counts them; null until the usage arrives. */
  promptTokens: z.number().nullable().optional(),
  completionTokens: z.number(),
  generationStats: GenerationStatsSchema.nullable(),
  /**
   * Decode tokens/s and inter-token latency p50/p95 over the tokens exobar relayed
   * (electron/core/sharing/decode-timing.ts); null under two streamed tokens.
   */
  decodeTokensPerSecond: z.number().nullable(),
  itlP50Ms: z.number().nullable(),
  itlP95Ms: z.number().nullable(),
  /** Why it failed or was cancelled, in words. */
  reason: z.string().nullable(),
  /** Its error code when it failed, as the proxy decided it (the request log's `errorCode`). */
  errorCode: z.string().nullable().optional(),
  /** Who cancelled it, when it was cancelled (the request log's `cancelledBy`). */
  cancelledBy: CancelledBySchema.nullable().optional(),
  /** The client's User-Agent (the request log's `client`); null when it sent none. */
  client: z.string().nullable().optional(),
  /** The dialect it came in (the request log's `api`: `openai-chat`, `anthropic-messages`, …). */
  api: z.string().nullable().optional(),
});
export type ProxiedRequest = z.infer<typeof ProxiedRequestSchema>;

/** The part of the exo client the traffic and the proxy read (the ExoClient satisfies it). */
export interface ExoStateSource {
  url: string;
  reading: ExoReading;
}

/** A proxied request's per-instance view, in the snapshot's shapes. */
export interface ExoInstanceTraffic {
  requests: RequestSnapshot[];
  prefill: PrefillSnapshot | null;
  ttft: TtftSnapshot;
  tokensPerSecond: number | null;
}

const ACTIVE: ReadonlySet<ProxiedPhase> = new Set(['loading', 'held', 'sent', 'prefilling', 'generating']);
const KEPT_ENDED = 200;
const RATE_WINDOW_MS = 5_000;

export const isActive = (r: ProxiedRequest) => ACTIVE.has(r.phase);

/**
 * The traffic's phase for a request's state: its state where the two name the same
 * thing; while exo has it (dispatched, answering, streaming, cancelling), what exobar
 * measured of its stream (a first token: generating; prefill progress: prefilling).
 */
function projectPhase(state: ProxiedRequestPhase, r: ProxiedRequest): ProxiedPhase {
  switch (state) {
    case 'loading':
    case 'held':
    case 'done':
    case 'failed':
    case 'cancelled':
      return state;
    default:
      return r.firstTokenAt != null ? 'generating' : r.firstProgressAt != null ? 'prefilling' : 'sent';
  }
}

/** The snapshot's phase for a proxied phase (held by exobar shows as queued). */
const SNAPSHOT_PHASE: Record<string, RequestPhase> = {
  loading: 'loading',
  held: 'queued',
  sent: 'awaiting_ack',
  prefilling: 'prefilling',
  generating: 'decoding',
};

export class ExoTraffic {
  private readonly live: ProxiedRequest[] = [];
  private readonly ended: ProxiedRequest[] = [];
  private readonly listeners = new Set<(record: ProxiedRequest) => void>();
  private readonly decode = new WeakMap<ProxiedRequest, DecodeTiming>();
  /** Each record's state, as its state machine last said (a record with none yet is about to go: `waiting`). */
  private readonly states = new WeakMap<ProxiedRequest, ProxiedRequestPhase>();
  private readonly gapListeners = new Set<(record: ProxiedRequest, gap: TokenGap) => void>();
  private refusedCount = 0;
  private readonly refusedList: Array<{ id: string; from: string; to: string; reason: string; at: number }> = [];

  constructor(
    private readonly source: () => ExoStateSource | null,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called on every change of a record (phase, progress, token): the snapshot's cue. */
  onChange(listener: (record: ProxiedRequest) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hears each inter-token gap of a proxied request (the per-model sharing statistics). */
  onGap(listener: (record: ProxiedRequest, gap: TokenGap) => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  /** A record's inter-token gaps, ms, in order, as exobar measured them on the stream it relayed. */
  gapsOf(record: ProxiedRequest): readonly number[] {
    return this.decode.get(record)?.gapsMs() ?? [];
  }

  /** A record's decode figures as of its latest token. */
  decodeStats(record: ProxiedRequest): DecodeStats {
    return this.decode.get(record)?.stats() ?? NO_DECODE;
  }

  /** A new proxied request, arrived at `arrivedAt` (epoch ms). */
  begin(model: string, upstreamUrl: string, stream: boolean, arrivedAt = this.now(), client: string | null = null, api = 'openai-chat'): ProxiedRequest {
    const record: ProxiedRequest = {
      id: `exobar-${randomUUID()}`,
      commandId: null,
      model,
      exoInstanceId: null,
      upstreamUrl,
      stream,
      phase: 'sent',
      arrivedAt,
      heldMs: 0,
      sentAt: null,
      firstProgressAt: null,
      lastProgressAt: null,
      firstTokenAt: null,
      lastTokenAt: null,
      endedAt: null,
      processedTokens: 0,
      totalTokens: 0,
      promptTokens: null,
      completionTokens: 0,
      generationStats: null,
      ...NO_DECODE,
      reason: null,
      errorCode: null,
      cancelledBy: null,
      client,
      api,
    };
    this.decode.set(
      record,
      new DecodeTiming((gap) => {
        for (const listener of this.gapListeners) listener(record, gap);
      }),
    );
    this.live.push(record);
    return record;
  }

  /** Its model's placement ended: its runners are ready; the TTFT's `load` part ends here. */
  loaded(record: ProxiedRequest): void {
    this.update(record, { loadedAt: this.now() });
  }

  /** It goes to exo now: when, and how long exobar held it. Its phase follows its state machine. */
  sent(record: ProxiedRequest): void {
    const at = this.now();
    this.update(record, { sentAt: at, heldMs: this.states.get(record) === 'held' ? at - (record.loadedAt ?? record.arrivedAt) : record.heldMs });
  }

  /**
   * The request's state machine moved to `state` (the one writer of the record's phase):
   * an end takes it out of the live list with its codes and its reason.
   */
  follow(record: ProxiedRequest, state: ProxiedRequestPhase, end: ProxiedEnd = { errorCode: null, cancelledBy: null }, reason: string | null = null): void {
    const wasActive = isActive(record);
    this.states.set(record, state);
    if (state !== 'done' && state !== 'failed' && state !== 'cancelled') return this.update(record, {});
    if (!wasActive) return;
    const index = this.live.indexOf(record);
    if (index >= 0) this.live.splice(index, 1);
    this.ended.push(record);
    if (this.ended.length > KEPT_ENDED) this.ended.splice(0, this.ended.length - KEPT_ENDED);
    this.update(record, {
      reason: state === 'done' ? null : reason,
      errorCode: state === 'failed' ? end.errorCode : null,
      cancelledBy: state === 'cancelled' ? end.cancelledBy : null,
      endedAt: this.now(),
      ...this.decodeStats(record),
    });
  }

  /** exo's `: prefill_progress` for this request. */
  progress(record: ProxiedRequest, processed: number, total: number): void {
    if (!isActive(record)) return;
    const at = this.now();
    this.update(record, {
      processedTokens: processed,
      totalTokens: total,
      firstProgressAt: record.firstProgressAt ?? at,
      lastProgressAt: at,
    });
  }

  /** A `data:` chunk with content; `commandId` is the chunk's id (exo's command id). */
  token(record: ProxiedRequest, commandId: string | null, tokens = 1): void {
    if (!isActive(record)) return;
    const at = this.now();
    if (commandId && record.commandId !== commandId) this.claim(record, commandId);
    this.decode.get(record)?.record(at, tokens);
    this.update(record, { completionTokens: record.completionTokens + tokens, firstTokenAt: record.firstTokenAt ?? at, lastTokenAt: at });
  }

  /** The usage exo reported (final chunk or whole body). */
  usage(record: ProxiedRequest, promptTokens: number | null, completionTokens: number | null): void {
    const change: Partial<ProxiedRequest> = {};
    if (promptTokens != null) change.promptTokens = promptTokens;
    if (promptTokens != null && record.totalTokens === 0) change.totalTokens = promptTokens;
    if (completionTokens != null) change.completionTokens = completionTokens;
    this.update(record, change);
  }

  generationStats(record: ProxiedRequest, stats: GenerationStats): void {
    this.update(record, { generationStats: stats });
  }

  /** A change a proxied request's state machine refused: a proxy bug, counted and kept (the latest 20). */
  refusedTransition(record: ProxiedRequest, change: { from: string; to: string; reason: string; at: number }): void {
    this.refusedCount += 1;
    this.refusedList.push({ id: record.id, ...change });
    if (this.refusedList.length > 20) this.refusedList.shift();
  }

  /** Changes the proxied requests' state machines refused so far: a proxy bug if ever non-zero. */
  get refusedTransitions(): number {
    return this.refusedCount;
  }

  /** The latest refused changes, oldest first. */
  get refusals(): ReadonlyArray<{ id: string; from: string; to: string; reason: string; at: number }> {
    return this.refusedList;
  }

  /** Sets exo's command id (from the stream, or from exo's task list while it prefills). */
  claim(record: ProxiedRequest, commandId: string): void {
    this.update(record, { commandId, id: commandId, exoInstanceId: record.exoInstanceId ?? this.instanceOfCommand(commandId) });
  }

  /** Proxied requests still in flight, oldest first. */
  active(): ProxiedRequest[] {
    return [...this.live];
  }

  /** Every record kept (in flight, then the last ended ones), for the API and the bundle. */
  records(): ProxiedRequest[] {
    return [...this.ended, ...this.live].map((r) => ({ ...r, ...this.decodeStats(r) }));
  }

  /** A record by exobar's id or exo's command id. */
  find(id: string): ProxiedRequest | null {
    return this.live.find((r) => r.id === id || r.commandId === id) ?? [...this.ended].reverse().find((r) => r.id === id || r.commandId === id) ?? null;
  }

  /** True when the exo task with this command id came through exobar (for ExoTaskSnapshot.observed). */
  isObserved(commandId: string): boolean {
    return this.live.some((r) => r.commandId === commandId) || this.ended.some((r) => r.commandId === commandId);
  }

  /**
   * Matches exo's TextGeneration tasks to proxied requests whose command id is not
   * known yet (exo's stream carries it only with the first token): per model, the
   * oldest unmatched request takes the oldest unmatched task, as exo creates tasks in
   * arrival order. Call after each poll of /state/tasks.
   */
  reconcile(): void {
    const reading = this.source()?.reading;
    if (!reading?.tasks || !reading.instances) return;
    const claimed = new Set(this.live.map((r) => r.commandId).filter(Boolean));
    for (const r of this.ended) if (r.commandId) claimed.add(r.commandId);
    for (const record of this.live) {
      if (record.commandId || record.phase === 'held' || record.phase === 'loading') continue;
      for (const task of reading.tasks.values()) {
        if (task.kind !== 'TextGeneration' || !task.commandId || claimed.has(task.commandId)) continue;
        if (task.status !== 'Pending' && task.status !== 'Running') continue;
        const instance = task.instanceId ? reading.instances.get(task.instanceId) : undefined;
        if (instance?.modelId !== record.model) continue;
        claimed.add(task.commandId);
        this.claim(record, task.commandId);
        break;
      }
    }
  }

  /** The exo instance a record belongs to: its task's, else the model's first instance. */
  instanceOf(record: ProxiedRequest): string | null {
    if (record.exoInstanceId) return record.exoInstanceId;
    const instances = this.source()?.reading.instances;
    if (!instances) return null;
    for (const instance of instances.values()) if (instance.modelId === record.model) return instance.instanceId;
    return null;
  }

  /** The proxied traffic of one exo instance, in the snapshot's shapes, as of now. */
  instanceView(exoInstanceId: string): ExoInstanceTraffic {
    const now = this.now();
    const mine = (r: ProxiedRequest) => this.instanceOf(r) === exoInstanceId;
    const live = this.live.filter(mine);
    return {
      requests: live.map((r) => this.requestSnapshot(r, now)),
      prefill: this.prefillSnapshot(live, now),
      ttft: this.ttftSnapshot([...this.ended, ...this.live].filter(mine)),
      tokensPerSecond: this.rate([...this.ended, ...this.live].filter(mine), now),
    };
  }

  /** The instance's requests in flight (RequestSnapshot shape). */
  requestsFor(exoInstanceId: string): RequestSnapshot[] {
    return this.instanceView(exoInstanceId).requests;
  }

  /**
   * A record's TTFT parts, once it has its first token: `load` while exobar placed its
   * model, then wait to the first progress (the hold included), prefill, first token.
   */
  static ttftOf(r: ProxiedRequest): TtftSample | null {
    if (r.firstTokenAt == null) return null;
    const progressStart = r.firstProgressAt ?? r.firstTokenAt;
    const progressEnd = r.lastProgressAt ?? r.firstTokenAt;
    const loadedAt = r.loadedAt ?? null;
    return {
      requestId: r.id,
      at: r.firstTokenAt,
      totalMs: r.firstTokenAt - r.arrivedAt,
      ...(loadedAt === null ? {} : { loadMs: loadedAt - r.arrivedAt }),
      waitMs: progressStart - (loadedAt ?? r.arrivedAt),
      prefillMs: progressEnd - progressStart,
      firstTokenMs: r.firstTokenAt - progressEnd,
      promptTokens: promptTokensOf(r),
    };
  }

  private requestSnapshot(r: ProxiedRequest, now: number): RequestSnapshot {
    return {
      id: r.id,
      phase: SNAPSHOT_PHASE[r.phase] ?? 'queued',
      ageMs: now - r.arrivedAt,
      promptTokens: promptTokensOf(r),
      completionTokens: r.completionTokens,
      ...this.decodeStats(r),
    };
  }

  private prefillSnapshot(live: ProxiedRequest[], now: number): PrefillSnapshot | null {
    const r = live.find((x) => x.phase === 'prefilling');
    if (!r) return null;
    const elapsed = r.firstProgressAt == null ? 0 : now - r.firstProgressAt;
    const rate = elapsed > 0 && r.processedTokens > 0 ? r.processedTokens / elapsed : null;
    return { requestId: r.id, processedTokens: r.processedTokens, totalTokens: r.totalTokens, etaMs: rate ? (r.totalTokens - r.processedTokens) / rate : null };
  }

  private ttftSnapshot(records: ProxiedRequest[]): TtftSnapshot {
    const samples = records
      .map((r) => ExoTraffic.ttftOf(r))
      .filter((s): s is TtftSample => s !== null)
      .sort((a, b) => a.at - b.at)
      .slice(-TTFT_WINDOW);
    const sorted = samples.map((s) => s.totalMs).sort((a, b) => a - b);
    return { samples, p50Ms: percentile(sorted, 0.5), p95Ms: percentile(sorted, 0.95), latest: samples.at(-1) ?? null };
  }

  /** Tokens per second over the last few seconds of generating records; null with no sample. */
  private rate(records: ProxiedRequest[], now: number): number | null {
    let tokens = 0;
    let span = 0;
    for (const r of records) {
      if (r.firstTokenAt == null || r.lastTokenAt == null || now - r.lastTokenAt > RATE_WINDOW_MS || r.completionTokens < 2) continue;
      tokens += r.completionTokens - 1;
      span = Math.max(span, r.lastTokenAt - r.firstTokenAt);
    }
    return span > 0 ? (tokens / span) * 1000 : null;
  }

  private instanceOfCommand(commandId: string): string | null {
    const tasks = this.source()?.reading.tasks;
    if (!tasks) return null;
    for (const task of tasks.values()) if (task.commandId === commandId) return task.instanceId;
    return null;
  }

  private update(record: ProxiedRequest, change: Partial<Omit<ProxiedRequest, 'phase'>>): void {
    Object.assign(record, change);
    record.phase = projectPhase(this.states.get(record) ?? 'waiting', record);
    for (const listener of this.listeners) listener(record);
  }
}

/** A request's prompt length: exo's usage once it came, before that the whole exo's prefill reads (one token less). */
function promptTokensOf(r: ProxiedRequest): number {
  return r.promptTokens ?? r.totalTokens;
}
