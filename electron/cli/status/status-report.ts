/**
 * `exobar status`'s glance, from a snapshot: each model's lifecycle in plain words, its
 * queue, requests in flight, TTFT p50, tokens/s and fast synch; the warnings; the exo
 * source. Pure: one JSON shape (`--json`) and the text drawn from it.
 */
import { instanceLifecycle, type InstanceLifecycle } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';
import { formatSeconds, inFlightCount, instanceStatusWords, queuedCount } from '../../../shared/status-words';

export interface StatusModel {
  id: string;
  model: string;
  name: string;
  /** "local" (this Mac's runner) or "exo" (an instance of the attached exo). */
  source: 'local' | 'exo';
  lifecycle: InstanceLifecycle;
  /** The runner's status in the page's words ("Ready", "Loading 12 of 28 layers", "Failed: …"). */
  status: string;
  queued: number;
  inFlight: number;
  ttftP50Ms: number | null;
  tokensPerSecond: number | null;
  /** Fast synch of a local runner; null for an exo instance whose value exobar cannot know. */
  fastSynch: { enabled: boolean; reason: string } | null;
}

export interface StatusReport {
  url: string;
  pid: number | null;
  version: string;
  models: StatusModel[];
  warnings: { code: string; title: string; assumed: boolean }[];
  /** The exo source: null when exobar is not attached to an exo. */
  exo: { url: string; connected: boolean; macs: number; lastError: string | null } | null;
}

/** The report of one snapshot taken from the server at `url`. */
export function statusReport(snapshot: Snapshot, url: string, pid: number | null): StatusReport {
  return {
    url,
    pid,
    version: snapshot.version,
    models: snapshot.instances.map((i) => ({
      id: i.id,
      model: i.model,
      name: i.modelName,
      source: i.source,
      lifecycle: instanceLifecycle(i),
      status: instanceStatusWords(i),
      queued: queuedCount(i),
      inFlight: inFlightCount(i),
      ttftP50Ms: i.ttft.p50Ms,
      tokensPerSecond: i.tokensPerSecond,
      fastSynch: i.source === 'local' ? { enabled: i.fastSynch.enabled, reason: i.fastSynch.reason } : null,
    })),
    warnings: snapshot.warnings.map((w) => ({ code: w.code, title: w.title, assumed: w.assumed ?? false })),
    exo: snapshot.exo
      ? { url: snapshot.exo.url, connected: snapshot.exo.connected, macs: snapshot.exo.nodes.length, lastError: snapshot.exo.lastError?.message ?? null }
      : null,
  };
}

const COLUMNS = ['MODEL', 'STATE', 'QUEUE', 'IN FLIGHT', 'TTFT P50', 'TOK/S', 'FAST SYNCH'] as const;

/** The report as the terminal shows it: a header line, a table of models, warnings and exo. */
export function statusText(report: StatusReport): string[] {
  const lines = [`exobar ${report.version} at ${report.url}${report.pid !== null ? ` (pid ${report.pid})` : ''}`];
  if (report.models.length === 0) {
    lines.push('no models running');
  } else {
    const rows = report.models.map((m) => [
      m.source === 'exo' ? `${m.name} (exo)` : m.name,
      m.lifecycle === 'serving' ? m.lifecycle : `${m.lifecycle}: ${m.status}`,
      String(m.queued),
      String(m.inFlight),
      m.ttftP50Ms === null ? '-' : formatSeconds(m.ttftP50Ms),
      m.tokensPerSecond === null ? '-' : m.tokensPerSecond.toFixed(1),
      m.fastSynch === null ? 'unknown' : `${m.fastSynch.enabled ? 'on' : 'off'} (${m.fastSynch.reason})`,
    ]);
    const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
    lines.push(line(COLUMNS), ...rows.map(line));
  }
  lines.push(
    report.warnings.length === 0
      ? 'warnings: none'
      : `warnings: ${report.warnings.map((w) => `${w.title}${w.assumed ? ' (assumed)' : ''} [${w.code}]`).join('; ')}`,
  );
  lines.push(
    report.exo === null
      ? 'exo: not attached'
      : `exo: ${report.exo.url}, ${report.exo.connected ? `connected, ${report.exo.macs} ${report.exo.macs === 1 ? 'Mac' : 'Macs'}` : `not answering${report.exo.lastError ? ` (${report.exo.lastError})` : ''}`}`,
  );
  return lines;
}
