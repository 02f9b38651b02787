/**
 * How long a diagnostic bundle export takes, and how big it gets, at the worst case the
 * issue names: 8 runners with their logs at their caps, the node's event ring buffer
 * and request history full. Two sources are measured:
 * - live: a running node's in-memory log tails (256 KiB each, supervisor/log-tail.ts);
 * - files: a data directory whose runner logs are at their file cap (5 MB, plus the
 *   rotated `.1` of the same size).
 *
 * `node --import tsx bench/diagnostics-export.ts [--json] [--trials N] [--runners N]`
 * prints a table (or JSON). Target: every export under 2 s, every bundle under 10 MB.
 */
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeDiagnosticBundle, type DiagnosticContext, type DiagnosticNode } from '../electron/core/diagnostics';
import { evenDecode } from '../test/support/decode-fixture';
import { MEDIUM, SMALL, syntheticNode } from '../test/support/diagnostics/synthetic-node';
import type { NodeEvent, RequestTimeline } from '../electron/core/node/node-types';

/** The supervisor's caps (supervisor/log-tail.ts): in memory and per log file. */
const MEMORY_TAIL_CHARS = 256 * 1024;
const LOG_FILE_CAP_BYTES = 5 * 1024 * 1024;
/** The node's event ring buffer and request history (node/event-log.ts, node.ts). */
const EVENT_CAPACITY = 20_000;
const TIMELINE_HISTORY = 2000;

export interface ExportMeasurement {
  source: 'live' | 'files';
  runners: number;
  trials_ms: number[];
  median_ms: number;
  max_ms: number;
  files: number;
  total_bytes: number;
  zip_bytes: number;
  truncated_files: number;
}

/** Log text like a runner's: protocol lines on stdout, pino lines (with paths and addresses to redact) on stderr. */
function logText(stream: 'stdout' | 'stderr', bytes: number, seed: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      stream === 'stdout'
        ? `{"type":"ChunkGenerated","commandId":"chatcmpl-${seed}-${i >> 6}","chunk":{"kind":"TokenChunk","text":" word${i % 911}","tokenId":${i % 32000},"finishReason":null,"usage":null,"stats":null}}`
        : `{"level":30,"time":${1_700_000_000_000 + i},"pid":${4000 + seed},"model":"sim/llama-3.2-1b","msg":"step ${i} batch 3 from /Users/someone/models peer 10.0.${seed}.${i % 250}"}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`.slice(-bytes);
}

/** The event ring buffer and request history at capacity, spread over the runners. */
function fullHistory(ids: string[]): { events: NodeEvent[]; timelines: RequestTimeline[] } {
  const timelines: RequestTimeline[] = [];
  const events: NodeEvent[] = [];
  for (let i = 0; i < TIMELINE_HISTORY; i++) {
    const instanceId = ids[i % ids.length]!;
    const t = 200_000 + i * 50;
    timelines.push({
      requestId: `chatcmpl-bench-${i}`,
      instanceId,
      model: `sim/${instanceId}`,
      promptTokens: 20 + (i % 7) * 300,
      completionTokens: 32,
      arrivedAt: t,
      dispatchedAt: t + 0.2,
      acknowledgedAt: t + 3,
      prefillStartAt: t + 3,
      prefillEndAt: t + 60,
      firstTokenAt: t + 90 + (i % 13) * 100,
      endedAt: t + 400,
      outcome: 'finished',
      ttft: null,
      ...evenDecode(32, t + 90 + (i % 13) * 100, t + 400),
      concurrentBusyInstances: i % 3 === 0 ? [ids[(i + 1) % ids.length]!] : [],
    });
  }
  // A request's life as the node logs it, repeated until the log is full.
  const life = (ids: { t: number; instanceId: string; requestId: string }): NodeEvent[] => [
    { ...ids, kind: 'request_arrived', data: { promptTokens: 20 } },
    { ...ids, kind: 'request_dispatched' },
    { ...ids, kind: 'request_acknowledged' },
    { ...ids, kind: 'prefill_progress', data: { processed: 4096, total: 8192 } },
    { ...ids, kind: 'first_token', data: { totalMs: 90, waitMs: 3, prefillMs: 57, firstTokenMs: 30 } },
    { ...ids, kind: 'request_finished', data: { completionTokens: 32 } },
  ];
  for (let i = 0; events.length < EVENT_CAPACITY; i++) {
    const timeline = timelines[i % timelines.length]!;
    const kinds = life({ t: timeline.arrivedAt + i * 0.01, instanceId: timeline.instanceId, requestId: timeline.requestId });
    events.push(kinds[i % kinds.length]!);
  }
  return { events, timelines };
}

async function oneSource(source: 'live' | 'files', runners: number, trials: number): Promise<ExportMeasurement> {
  const dir = await mkdtemp(join(tmpdir(), 'exobar-bench-diag-'));
  try {
    // The synthetic node's two instances plus more, `runners` in all.
    const extra = Array.from({ length: Math.max(0, runners - 2) }, (_, i) => `bench-runner-${i}`);
    const ids = [SMALL, MEDIUM, ...extra].slice(0, runners);
    const { events, timelines } = fullHistory(ids);
    let node: DiagnosticNode | null = null;
    if (source === 'live') {
      const logs = Object.fromEntries(
        ids.map((id, i) => [id, { stdout: logText('stdout', MEMORY_TAIL_CHARS, i), stderr: logText('stderr', MEMORY_TAIL_CHARS, i) }]),
      );
      const synthetic = syntheticNode({ logs, instanceIds: extra, events, timelines });
      node = synthetic;
    } else {
      for (const [i, id] of ids.entries()) {
        const logDir = join(dir, 'logs', id);
        await mkdir(logDir, { recursive: true });
        for (const stream of ['stdout', 'stderr'] as const) {
          const text = logText(stream, LOG_FILE_CAP_BYTES, i);
          await writeFile(join(logDir, `${stream}.log`), text);
          await writeFile(join(logDir, `${stream}.log.1`), text);
        }
      }
    }
    const ctx: DiagnosticContext = { node, dataDir: dir, settings: null, version: 'bench' };
    const times: number[] = [];
    let last: Awaited<ReturnType<typeof writeDiagnosticBundle>> | null = null;
    for (let trial = 0; trial < trials; trial++) {
      const out = join(dir, `bundle-${trial}.zip`);
      const started = performance.now();
      last = await writeDiagnosticBundle(ctx, out);
      times.push(Math.round(performance.now() - started));
      if ((await stat(out)).size !== last.zipBytes) throw new Error('zip size mismatch');
    }
    const sorted = [...times].sort((a, b) => a - b);
    return {
      source,
      runners,
      trials_ms: times,
      median_ms: sorted[Math.floor(sorted.length / 2)]!,
      max_ms: sorted.at(-1)!,
      files: last!.files.length,
      total_bytes: last!.totalBytes,
      zip_bytes: last!.zipBytes,
      truncated_files: last!.truncated.length,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Measures both sources; `trials` exports each. */
export async function measureDiagnosticsExport(runners = 8, trials = 5): Promise<ExportMeasurement[]> {
  return [await oneSource('live', runners, trials), await oneSource('files', runners, trials)];
}

function printTable(rows: ExportMeasurement[]): void {
  const header = ['source', 'runners', 'files', 'total (MB)', 'zip (MB)', 'cut files', 'median (ms)', 'max (ms)', 'trials (ms)', '< 2 s, < 10 MB'];
  const mb = (n: number) => (n / 1024 / 1024).toFixed(2);
  const cells = rows.map((r) => [
    r.source,
    String(r.runners),
    String(r.files),
    mb(r.total_bytes),
    mb(r.zip_bytes),
    String(r.truncated_files),
    String(r.median_ms),
    String(r.max_ms),
    r.trials_ms.join(' '),
    r.max_ms < 2000 && r.total_bytes < 10 * 1024 * 1024 ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(`${line(header)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${cells.map(line).join('\n')}\n`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const number = (flag: string, fallback: number) => {
    const i = argv.indexOf(flag);
    const value = i === -1 ? fallback : Number(argv[i + 1]);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} needs a positive integer`);
    return value;
  };
  const rows = await measureDiagnosticsExport(number('--runners', 8), number('--trials', 5));
  if (json) process.stdout.write(`${JSON.stringify({ diagnostics_export: rows }, null, 2)}\n`);
  else {
    printTable(rows);
    process.stdout.write(`\n${JSON.stringify({ diagnostics_export: rows })}\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
