/**
 * Every ended request as one {@link RequestRecord}, local or proxied to exo: the one
 * source the request log, the metrics and the history read, so the three agree. Local
 * records come from the node's own request (its timeline, at its end); exo records
 * from the proxy's traffic record (exobar's measurements of the stream it relayed).
 * Nothing here measures a second time.
 */
import { hostname } from 'node:os';
import type { RequestRecord } from '../../../shared/request-record';
import type { Snapshot } from '../../../shared/snapshot';
import type { ExoTraffic, ProxiedRequest } from '../exo/proxy/exo-traffic';
import { ExoTraffic as ExoTrafficClass } from '../exo/proxy/exo-traffic';
import type { EndedRequest, ExobarNode } from '../node/node-types';

/** A rate that is a real number and not negative, else unknown. */
function rateOrNull(value: number | null | undefined): number | null {
  return value != null && Number.isFinite(value) && value >= 0 ? value : null;
}

/** Tokens per second over a span in ms; unknown when the span is not positive. */
function perSecond(tokens: number, spanMs: number | null): number | null {
  return spanMs != null && spanMs > 0 && tokens > 0 ? (tokens / spanMs) * 1000 : null;
}

/** The request record of a local request at its end. */
export function localRecord(ended: EndedRequest, mac: string): RequestRecord {
  const t = ended.timeline;
  const ttft = t.ttft;
  const outcome = t.outcome === 'finished' ? 'done' : t.outcome === 'in_flight' ? 'failed' : t.outcome;
  return {
    id: t.requestId,
    at: Math.round(ended.arrivedAtEpochMs),
    endedAt: Math.round(ended.endedAtEpochMs),
    model: t.model,
    instance: t.instanceId,
    source: 'local',
    node: mac,
    client: ended.client,
    api: ended.api,
    promptTokens: t.promptTokens,
    // What the runner's prompt cache served, where the runner says (protocol 3).
    cachedTokens: t.cachedTokens ?? null,
    outputTokens: t.completionTokens,
    ttftMs: ttft?.totalMs ?? null,
    loadMs: ttft?.loadMs ?? null,
    waitMs: ttft?.waitMs ?? null,
    runnerWaitMs: ttft?.runnerWaitMs ?? null,
    prefillMs: ttft?.prefillMs ?? null,
    firstTokenMs: ttft?.firstTokenMs ?? null,
    // The runner's own figure where it sent one (at the end), else the prompt over the measured prefill.
    prefillTokensPerSecond: rateOrNull(ended.stats?.promptTps) ?? perSecond(t.promptTokens, ttft?.prefillMs ?? null),
    // The node's own per-request decode figures (electron/core/sharing/decode-timing.ts).
    decodeTokensPerSecond: rateOrNull(t.decodeTokensPerSecond),
    itlP95Ms: rateOrNull(t.itlP95Ms),
    outcome,
    cancelledBy: outcome === 'cancelled' ? ended.cancelledBy : null,
    errorCode: outcome === 'failed' ? (ended.errorCode ?? 'unknown') : null,
  };
}

/** Where an exo instance shows in the snapshot: exobar's id for it and the Mac that serves it (rank 0). */
function exoPlace(snapshot: Snapshot, exoInstanceId: string | null): { instance: string | null; node: string | null } {
  if (exoInstanceId == null) return { instance: null, node: null };
  const found = snapshot.instances.find((i) => i.source === 'exo' && i.exo.exoInstanceId === exoInstanceId);
  if (!found || found.source !== 'exo') return { instance: exoInstanceId, node: null };
  const runner = [...found.exo.runners].sort((a, b) => (a.rank ?? 99) - (b.rank ?? 99))[0];
  return { instance: found.id, node: runner ? (runner.nodeName ?? runner.nodeId) : null };
}

/** The request record of a proxied request at its end. */
export function exoRecord(r: ProxiedRequest, place: { instance: string | null; node: string | null }): RequestRecord {
  const ttft = ExoTrafficClass.ttftOf(r);
  const stats = r.generationStats;
  const outcome = r.phase === 'done' ? 'done' : r.phase === 'cancelled' ? 'cancelled' : 'failed';
  const promptTokens = stats?.prompt_tokens ?? r.totalTokens;
  return {
    id: r.commandId ?? r.id,
    at: Math.round(r.arrivedAt),
    endedAt: Math.round(r.endedAt ?? r.arrivedAt),
    model: r.model,
    instance: place.instance,
    source: 'exo',
    node: place.node,
    client: r.client ?? null,
    // The dialect the proxy took it in (chat completions before the record kept it).
    api: r.api ?? 'openai-chat',
    promptTokens,
    cachedTokens: null,
    outputTokens: stats?.generation_tokens ?? r.completionTokens,
    ttftMs: ttft?.totalMs ?? null,
    loadMs: ttft?.loadMs ?? null,
    waitMs: ttft?.waitMs ?? null,
    runnerWaitMs: ttft?.runnerWaitMs ?? null,
    prefillMs: ttft?.prefillMs ?? null,
    firstTokenMs: ttft?.firstTokenMs ?? null,
    prefillTokensPerSecond: rateOrNull(stats?.prompt_tps) ?? perSecond(promptTokens, ttft?.prefillMs ?? null),
    // Measured on the stream exobar relayed; exo's own generation_tps where exobar saw under two tokens.
    decodeTokensPerSecond: rateOrNull(r.decodeTokensPerSecond) ?? rateOrNull(stats?.generation_tps),
    itlP95Ms: rateOrNull(r.itlP95Ms),
    outcome,
    // The codes the proxy decided where the request ended (proxied-request-state.ts), never parsed from its words.
    cancelledBy: outcome === 'cancelled' ? (r.cancelledBy ?? 'exobar') : null,
    errorCode: outcome === 'failed' ? (r.errorCode ?? 'exo_error') : null,
  };
}

const TERMINAL = new Set(['done', 'failed', 'cancelled']);

/** What a record's listeners may use and the log never keeps: the request's inter-token gaps (the ITL histogram's samples). */
export interface RecordDetail {
  itlGapsMs: readonly number[];
}

const NO_DETAIL: RecordDetail = Object.freeze({ itlGapsMs: [] });

/** Hands every ended request, as a record, to its listeners, once each. */
export class RequestFeed {
  private readonly listeners = new Set<(record: RequestRecord, detail: RecordDetail) => void>();
  private readonly seen = new WeakSet<ProxiedRequest>();
  private readonly unsubscribe: Array<() => void> = [];
  /** This Mac's name for local records. */
  readonly mac = hostname();

  constructor(node: ExobarNode, traffic: ExoTraffic | null) {
    this.unsubscribe.push(node.onRequestEnded((ended) => this.emit(localRecord(ended, this.mac), { itlGapsMs: ended.itlGapsMs })));
    if (traffic) {
      this.unsubscribe.push(
        traffic.onChange((r) => {
          // A record changes once more after its end (decode figures, usage): count the first time only.
          if (!TERMINAL.has(r.phase) || this.seen.has(r)) return;
          this.seen.add(r);
          this.emit(exoRecord(r, exoPlace(node.snapshot(), traffic.instanceOf(r))), { itlGapsMs: traffic.gapsOf(r) });
        }),
      );
    }
  }

  /** Listens for records; returns the unsubscribe. */
  onRecord(listener: (record: RequestRecord, detail: RecordDetail) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Records a record that came from elsewhere (a test, or a part of exobar with requests of its own). */
  emit(record: RequestRecord, detail: RecordDetail = NO_DETAIL): void {
    for (const listener of this.listeners) listener(record, detail);
  }

  close(): void {
    for (const off of this.unsubscribe.splice(0)) off();
    this.listeners.clear();
  }
}
