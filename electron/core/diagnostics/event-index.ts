/**
 * The node's events, indexed once for the diagnosis: the causes ask "which statuses
 * held then", "what did the watchdog see", "how far had its prefill got"; answering
 * each by scanning the whole event log per request would be quadratic in the history.
 */
import type { RunnerStatusKind } from '../../../shared/runner-protocol';
import type { NodeEvent } from '../node/node-types';
import type { RunnerIncident } from './diagnosis-types';

/** One runner status change: when, and to what. */
export interface StatusChange {
  t: number;
  kind: RunnerStatusKind;
}

/** Per instance: the runner's status changes, in time order. */
export function statusHistory(events: readonly NodeEvent[]): Map<string, StatusChange[]> {
  const out = new Map<string, StatusChange[]>();
  for (const e of events) {
    if (e.kind !== 'runner_status') continue;
    const list = out.get(e.instanceId) ?? [];
    list.push({ t: e.t, kind: e.data.status.kind });
    out.set(e.instanceId, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.t - b.t);
  return out;
}

/** The runner statuses that held at some moment in [from, to]; empty when nothing is known. */
export function statusesDuring(history: StatusChange[] | undefined, from: number, to: number): RunnerStatusKind[] {
  if (!history || history.length === 0) return [];
  const seen = new Set<RunnerStatusKind>();
  let before: StatusChange | null = null;
  for (const change of history) {
    if (change.t <= from) before = change;
    else if (change.t <= to) seen.add(change.kind);
  }
  if (before) seen.add(before.kind);
  return [...seen];
}

/** Watchdog kills and every exit the operator did not ask for (a stop is no incident). */
export function incidentsOf(events: readonly NodeEvent[]): RunnerIncident[] {
  const out: RunnerIncident[] = [];
  for (const e of events) {
    if (e.kind === 'watchdog_fired') {
      const { phase, silentMs, deadlineMs } = e.data;
      out.push({ instanceId: e.instanceId, t: e.t, kind: 'watchdog', cause: 'stuck', code: null, signal: null, reason: null, phase, silentMs, deadlineMs });
    } else if (e.kind === 'runner_exited' && e.data.cause !== 'stopped') {
      const { cause, code, signal, reason } = e.data;
      out.push({ instanceId: e.instanceId, t: e.t, kind: 'exit', cause, code, signal, reason, phase: null, silentMs: null, deadlineMs: null });
    }
  }
  return out;
}

/** The error code a failed request ended with (request_failed events carry it). */
export function failureCodes(events: readonly NodeEvent[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of events) if (e.kind === 'request_failed') out.set(e.requestId, e.data.code);
  return out;
}

/** Per request, its last prefill progress: tokens processed so far and when (monotonic ms). */
export function prefillProgress(events: readonly NodeEvent[]): Map<string, { processed: number; t: number }> {
  const out = new Map<string, { processed: number; t: number }>();
  for (const e of events) if (e.kind === 'prefill_progress') out.set(e.requestId, { processed: e.data.processed, t: e.t });
  return out;
}

/** Instances whose runner's latest hello said fast synch is on. */
export function latestFastSynch(events: readonly NodeEvent[]): string[] {
  const latest = new Map<string, boolean>();
  for (const e of events) if (e.kind === 'runner_hello') latest.set(e.instanceId, e.data.fastSynch);
  return [...latest].filter(([, on]) => on).map(([id]) => id);
}
