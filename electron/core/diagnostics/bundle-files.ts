/**
 * Builds every file of the diagnostic bundle in memory, redacted and within its size
 * limits. The zip writer and the preview both start here, so the preview lists exactly
 * what the zip will hold. The node's state, settings and exo files are gathered here;
 * each runner's folder comes from runner-bundle-files.ts, README.txt and manifest.json
 * from bundle-manifest.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Snapshot } from '../../../shared/snapshot';
import { exoLogDir, type ExoLogBundleFile } from '../exo-process/exo-logs';
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { jsonBytes, resolveLimits, type BundleFile, type DiagnosticContext, type TruncatedFile } from './bundle-context';
import { checkBundleFiles } from './check-bundle-files';
import { diagnose, type Diagnosis, type Finding } from './diagnosis';
import { exoBundleFiles } from './exo-bundle-files';
import { diagnoseExo } from './exo-diagnosis';
import { readLogFileTail, truncationMarker } from './log-tails';
import { buildPolicyReport } from './policy-report';
import { finalBundleFiles } from './bundle-manifest';
import { Redactor, type RedactionCounts } from './redaction';
import { runnerBundleFiles } from './runner-bundle-files';
import { readSettingsFile, stripSecretFields } from './settings-report';
import { readSystemInfo } from './system-info';
import { timelineCsv } from './timeline-csv';

export type { BundleFile } from './bundle-context';

export interface BundleContents {
  files: BundleFile[];
  redactions: RedactionCounts;
  totalBytes: number;
  /** Files cut to stay within the limits, with what was left out. */
  truncated: TruncatedFile[];
  diagnosis: Diagnosis | null;
  exportedAt: Date;
}

/** Reserved for README.txt and manifest.json, which are written last. */
const FINAL_FILES_RESERVE = 64 * 1024;


/** The control token of a data directory and of the environment: redacted verbatim wherever it appears. */
async function knownSecrets(ctx: DiagnosticContext): Promise<string[]> {
  const secrets = [...(ctx.secrets ?? [])];
  if (process.env.EXOBAR_TOKEN) secrets.push(process.env.EXOBAR_TOKEN);
  if (ctx.dataDir) {
    try {
      const token = (await readFile(join(ctx.dataDir, 'token'), 'utf8')).trim();
      if (token) secrets.push(token);
    } catch {
      // No token file: nothing to hide.
    }
  }
  return secrets;
}

/** Events as JSON lines, the most recent that fit in `maxBytes`. */
function eventsJsonl(events: readonly NodeEvent[], redactor: Redactor, maxBytes: number): { data: Buffer; omitted: number } {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    const line = `${JSON.stringify(redactor.value(events[i]))}\n`;
    const size = Buffer.byteLength(line);
    if (bytes + size > maxBytes) break;
    lines.push(line);
    bytes += size;
  }
  lines.reverse();
  return { data: Buffer.from(lines.join(''), 'utf8'), omitted: events.length - lines.length };
}

/** Findings worth reading first: bugs, then the longest waits. */
function rankFindings(findings: readonly Finding[], max: number): Finding[] {
  return [...findings].sort((a, b) => Number(b.bugToReport) - Number(a.bugToReport) || b.elapsedMs - a.elapsedMs).slice(0, max);
}

/** exo's logs as exobar kept them on disk (an export from a data directory, no exobar running). */
async function exoLogFilesOnDisk(dataDir: string, redactor: Redactor, capBytes: number): Promise<ExoLogBundleFile[]> {
  return Promise.all(
    (['stdout', 'stderr'] as const).map(async (stream) => {
      const tail = await readLogFileTail(exoLogDir(dataDir), stream, capBytes, 'exo-');
      const text = redactor.text(tail.text);
      return {
        name: `exo/exo-${stream}.log`,
        text: tail.omittedBytes > 0 ? truncationMarker(tail.omittedBytes) + text : text,
        omittedBytes: tail.omittedBytes,
      };
    }),
  );
}

const hasText = (files: readonly ExoLogBundleFile[]): boolean => files.some((file) => file.text !== '');

/**
 * exo's output tails: from the exo exobar runs, else (not started in this run, or no
 * exobar running) from its log files in the data directory; nothing when both are
 * empty (exobar never started exo).
 */
async function exoLogFiles(ctx: DiagnosticContext, redactor: Redactor, capBytes: number): Promise<ExoLogBundleFile[]> {
  const live = ctx.exoProcess?.diagnosticLogTails(redactor, capBytes) ?? [];
  if (hasText(live)) return live;
  const disk = ctx.dataDir ? await exoLogFilesOnDisk(ctx.dataDir, redactor, capBytes) : [];
  return hasText(disk) ? disk : [];
}

/**
 * Collects and redacts every file of the bundle. Never includes prompt or completion
 * text, secrets or the machine's identity (see redaction.ts); stays within the limits.
 */
export async function collectBundle(ctx: DiagnosticContext): Promise<BundleContents> {
  const limits = resolveLimits(ctx.limits);
  const now = (ctx.now ?? (() => performance.now()))();
  const exportedAt = new Date();
  const truncated: BundleContents['truncated'] = [];
  const files: BundleFile[] = [];

  const snapshot: Snapshot | null = ctx.node ? ctx.node.snapshot() : null;
  const events: NodeEvent[] = ctx.node ? [...ctx.node.recentEvents()].sort((a, b) => a.t - b.t) : [];
  const timelines: RequestTimeline[] = ctx.node ? ctx.node.requestTimelines() : [];
  const systemInfo = ctx.systemInfo ? ctx.systemInfo() : readSystemInfo();

  // Settings first: their secret values are also redacted verbatim wherever else they appear.
  const settingsSource =
    ctx.settings != null
      ? { source: 'running app' as const, valid: true, problem: null, settings: ctx.settings }
      : ctx.dataDir
        ? await readSettingsFile(ctx.dataDir)
        : null;
  const stripped = stripSecretFields(settingsSource?.settings ?? null);
  const r = new Redactor({ identity: ctx.identity, secrets: [...(await knownSecrets(ctx)), ...stripped.removed] });

  const diagnosis = ctx.node ? diagnose(timelines, events, { ...ctx.diagnosis, now }) : null;
  const causeOf = new Map((diagnosis?.findings ?? []).map((f) => [f.requestId, f.cause]));

  files.push({
    name: 'snapshot.json',
    data: jsonBytes(snapshot ? r.value(snapshot) : { available: false, reason: 'exported from a data directory with no node running: there is no live state' }),
  });

  const ev = eventsJsonl(events, r, limits.maxEventsBytes);
  files.push({ name: 'events.jsonl', data: ev.data });
  if (ev.omitted > 0) truncated.push({ name: 'events.jsonl', omitted: `${ev.omitted} older events` });

  const csv = timelineCsv(timelines, { causeOf: (id) => causeOf.get(id) ?? null, cell: (t) => r.text(t), maxBytes: limits.maxTimelineBytes, now });
  files.push({ name: 'timeline.csv', data: Buffer.from(csv.text, 'utf8') });
  if (csv.omittedRows > 0) truncated.push({ name: 'timeline.csv', omitted: `${csv.omittedRows} older requests` });

  files.push({ name: 'policy.json', data: jsonBytes(r.value(buildPolicyReport(snapshot, events))) });
  // Per model and minute (hours past a day), 30 days: counts and percentiles, no request content.
  const history = ctx.history?.();
  if (history) files.push({ name: 'history.json', data: jsonBytes(r.value(history)) });
  // The latest GPU sharing checks (markdown and JSON): figures and the machine's facts, redacted like the rest.
  if (ctx.dataDir) files.push(...checkBundleFiles(ctx.dataDir, r));
  files.push({ name: 'system.json', data: jsonBytes(r.value(await systemInfo)) });
  files.push({
    name: 'settings.json',
    data: jsonBytes(
      r.value({
        source: settingsSource?.source ?? 'none',
        valid: settingsSource?.valid ?? false,
        problem: settingsSource?.problem ?? 'no settings were given and no data directory is known',
        settings: stripped.value,
      }),
    ),
  });

  // This Mac's exo, when exobar ran it: both tails, redacted, within the per-log cap.
  for (const file of await exoLogFiles(ctx, r, limits.maxLogBytesPerFile)) {
    files.push({ name: file.name, data: Buffer.from(file.text, 'utf8') });
    if (file.omittedBytes > 0) truncated.push({ name: file.name, omitted: `the first ${file.omittedBytes} bytes` });
  }

  // The diagnosis is redacted like everything else (model ids may be local paths).
  const shownDiagnosis: Diagnosis | null = diagnosis ? r.value({ ...diagnosis, findings: rankFindings(diagnosis.findings, limits.maxFindings) }) : null;
  const diagnosisBytes = shownDiagnosis ? jsonBytes(shownDiagnosis).length : 0;

  // Attach mode: exo's last state, status history, poll errors and, when exo runs here, its logs.
  const exoCauses = diagnoseExo(snapshot);
  const exoSource = ctx.exo?.() ?? null;
  if (exoSource) {
    const exo = await exoBundleFiles(exoSource, exoCauses, r, Math.floor(limits.maxLogBytesPerFile / 2));
    files.push(...exo.files);
    truncated.push(...exo.truncated);
  }

  // Runner logs share what is left of the total, each within its own cap.
  const used = files.reduce((sum, f) => sum + f.data.length, 0) + FINAL_FILES_RESERVE + diagnosisBytes;
  const runners = await runnerBundleFiles(ctx, { snapshot, events, limits, redactor: r, budgetBytes: limits.maxTotalBytes - used });
  files.push(...runners.files);
  truncated.push(...runners.truncated);

  // README and manifest come last: they report the final redaction counts and sizes.
  const redactions = r.report();
  const finalFiles = finalBundleFiles(ctx, {
    files,
    redactions,
    truncated,
    limits,
    exportedAt,
    now,
    systemInfo: await systemInfo,
    diagnosis,
    shownDiagnosis,
    exoCauses: r.value(exoCauses),
  });
  const all = [...finalFiles, ...files];
  return {
    files: all,
    redactions,
    totalBytes: all.reduce((sum, f) => sum + f.data.length, 0),
    truncated,
    diagnosis,
    exportedAt,
  };
}
