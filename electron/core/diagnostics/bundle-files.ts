/**
 * Builds every file of the diagnostic bundle in memory, redacted and within its size
 * limits. The zip writer and the preview both start here, so the preview lists exactly
 * what the zip will hold.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { localInstances } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';
import { exoLogDir, type ExoLogBundleFile } from '../exo-process/exo-logs';
import type { NodeEvent, RequestTimeline } from '../node/node-types';
import { instanceIdOf, isEventOf } from '../node/node-event';
import { resolveLimits, type BundleLimits, type DiagnosticContext } from './bundle-context';
import { checkBundleFiles } from './check-bundle-files';
import { diagnose, type Diagnosis, type Finding } from './diagnosis';
import { exoBundleFiles } from './exo-bundle-files';
import { diagnoseExo } from './exo-diagnosis';
import { capMemoryTail, listLogDirs, readLogFileTail, runnerLogDir, safeSegment, truncationMarker, type LogTail } from './log-tails';
import { buildPolicyReport } from './policy-report';
import { readmeText } from './readme-text';
import { Redactor, type RedactionCounts } from './redaction';
import { readSettingsFile, stripSecretFields } from './settings-report';
import { readSystemInfo } from './system-info';
import { timelineCsv } from './timeline-csv';

export interface BundleFile {
  name: string;
  data: Buffer;
}

export interface BundleContents {
  files: BundleFile[];
  redactions: RedactionCounts;
  totalBytes: number;
  /** Files cut to stay within the limits, with what was left out. */
  truncated: Array<{ name: string; omitted: string }>;
  diagnosis: Diagnosis | null;
  exportedAt: Date;
}

/** Reserved for README.txt and manifest.json, which are written last. */
const FINAL_FILES_RESERVE = 64 * 1024;

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');

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

/** Which runners get a runners/<id>/ folder: the node's instances, those in events, then log folders on disk. */
async function runnerIds(ctx: DiagnosticContext, snapshot: Snapshot | null, events: readonly NodeEvent[], limits: BundleLimits): Promise<string[]> {
  const ids: string[] = [];
  const add = (id: string) => {
    if (!ids.includes(id)) ids.push(id);
  };
  for (const instance of snapshot?.instances ?? []) add(instance.id);
  for (let i = events.length - 1; i >= 0; i--) {
    const id = instanceIdOf(events[i]!);
    if (id) add(id);
  }
  if (ctx.dataDir) for (const id of await listLogDirs(ctx.dataDir)) add(id);
  return ids.slice(0, limits.maxRunners);
}

/** exit.json: what is known of a runner's status and deaths. */
function exitReport(id: string, snapshot: Snapshot | null, events: readonly NodeEvent[]): unknown {
  const instance = (snapshot ? localInstances(snapshot) : []).find((i) => i.id === id) ?? null;
  const mine = events.filter((e) => instanceIdOf(e) === id);
  const pick = (kind: 'runner_exited' | 'watchdog_fired' | 'runner_restart_scheduled' | 'runner_spawned' | 'runner_state' | 'runner_state_refused') =>
    mine.filter(isEventOf(kind)).map((e) => ({ t: e.t, ...e.data }));
  return {
    instanceId: id,
    model: instance?.model ?? null,
    current: instance !== null,
    state: instance?.runner.state ?? null,
    attention: instance?.runner.attention ?? null,
    status: instance?.runner.status ?? null,
    pid: instance?.runner.pid ?? null,
    restarts: instance?.runner.restarts ?? null,
    malformedLines: instance?.runner.malformedLines ?? null,
    /** The last exit: its cause (crash, stuck, startup_failed, stopped), code or signal, and the message (the runner's own when it gave one). */
    lastExit: instance?.runner.lastExit ?? null,
    exits: pick('runner_exited'),
    watchdog: pick('watchdog_fired'),
    restartsScheduled: pick('runner_restart_scheduled'),
    spawned: pick('runner_spawned'),
    /** Every transition of the runner's state, with its reason. */
    transitions: pick('runner_state'),
    /** Transitions the supervisor's table refused: a supervisor bug whenever this is not empty. */
    refusedTransitions: pick('runner_state_refused'),
  };
}

async function logTail(ctx: DiagnosticContext, id: string, stream: 'stdout' | 'stderr', capBytes: number): Promise<LogTail> {
  const memory = ctx.node?.runnerLogs(id) ?? null;
  if (memory) return capMemoryTail(memory[stream], capBytes);
  if (ctx.dataDir) return readLogFileTail(runnerLogDir(ctx.dataDir, id), stream, capBytes);
  return { text: '', sourceBytes: 0, omittedBytes: 0, source: 'none' };
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
    data: json(snapshot ? r.value(snapshot) : { available: false, reason: 'exported from a data directory with no node running: there is no live state' }),
  });

  const ev = eventsJsonl(events, r, limits.maxEventsBytes);
  files.push({ name: 'events.jsonl', data: ev.data });
  if (ev.omitted > 0) truncated.push({ name: 'events.jsonl', omitted: `${ev.omitted} older events` });

  const csv = timelineCsv(timelines, { causeOf: (id) => causeOf.get(id) ?? null, cell: (t) => r.text(t), maxBytes: limits.maxTimelineBytes, now });
  files.push({ name: 'timeline.csv', data: Buffer.from(csv.text, 'utf8') });
  if (csv.omittedRows > 0) truncated.push({ name: 'timeline.csv', omitted: `${csv.omittedRows} older requests` });

  files.push({ name: 'policy.json', data: json(r.value(buildPolicyReport(snapshot, events))) });
  // Per model and minute (hours past a day), 30 days: counts and percentiles, no request content.
  const history = ctx.history?.();
  if (history) files.push({ name: 'history.json', data: json(r.value(history)) });
  // The latest GPU sharing checks (markdown and JSON): figures and the machine's facts, redacted like the rest.
  if (ctx.dataDir) files.push(...checkBundleFiles(ctx.dataDir, r));
  files.push({ name: 'system.json', data: json(r.value(await systemInfo)) });
  files.push({
    name: 'settings.json',
    data: json(
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
  const diagnosisBytes = shownDiagnosis ? json(shownDiagnosis).length : 0;

  // Attach mode: exo's last state, status history, poll errors and, when exo runs here, its logs.
  const exoCauses = diagnoseExo(snapshot);
  const exoSource = ctx.exo?.() ?? null;
  if (exoSource) {
    const exo = await exoBundleFiles(exoSource, exoCauses, r, Math.floor(limits.maxLogBytesPerFile / 2));
    files.push(...exo.files);
    truncated.push(...exo.truncated);
  }

  // Runner logs share what is left of the total, each within its own cap.
  const ids = await runnerIds(ctx, snapshot, events, limits);
  const used = files.reduce((sum, f) => sum + f.data.length, 0) + FINAL_FILES_RESERVE + diagnosisBytes;
  const exitReports = ids.map((id) => ({ id, data: json(r.value(exitReport(id, snapshot, events))) }));
  const exitBytes = exitReports.reduce((sum, e) => sum + e.data.length, 0);
  const logBudget = Math.max(0, limits.maxTotalBytes - used - exitBytes);
  const perLog = ids.length > 0 ? Math.min(limits.maxLogBytesPerFile, Math.floor(logBudget / (ids.length * 2))) : 0;
  // Each runner's logs are read and redacted one runner at a time: the work is CPU-bound regexes.
  for (const { id, data } of exitReports) {
    const dir = `runners/${safeSegment(id)}`;
    for (const stream of ['stdout', 'stderr'] as const) {
      const tail = await logTail(ctx, id, stream, perLog);
      let text = r.text(tail.text);
      // Redaction may lengthen a line; cut again rather than exceed the cap.
      let omitted = tail.omittedBytes;
      if (Buffer.byteLength(text) > perLog) {
        const again = capMemoryTail(text, perLog);
        omitted += again.omittedBytes;
        text = again.text;
      }
      if (omitted > 0) {
        text = truncationMarker(omitted) + text;
        truncated.push({ name: `${dir}/${stream}.log`, omitted: `the first ${omitted} bytes` });
      }
      files.push({ name: `${dir}/${stream}.log`, data: Buffer.from(text, 'utf8') });
    }
    files.push({ name: `${dir}/exit.json`, data });
  }

  // README and manifest come last: they report the final redaction counts and sizes.
  const listed = files.map((f) => ({ name: f.name, bytes: f.data.length }));
  const redactions = r.report();
  const manifest = {
    bundleFormat: 1,
    exobarVersion: ctx.version,
    platform: process.platform,
    arch: process.arch,
    osRelease: (await systemInfo).osRelease,
    nodeVersion: process.versions.node,
    electronVersion: process.versions.electron ?? null,
    exportedAt: exportedAt.toISOString(),
    /** The monotonic clock of events.jsonl and timeline.csv at export: t_epoch = exportedAtEpochMs - (monotonicNowMs - t). */
    exportedAtEpochMs: exportedAt.getTime(),
    monotonicNowMs: Math.round(now * 10) / 10,
    processUptimeS: Math.round(process.uptime()),
    systemUptimeS: (await systemInfo).systemUptimeS,
    source: (ctx.node ? 'running node' : 'data directory') as 'running node' | 'data directory',
    limits,
    files: listed,
    redactions,
    truncated,
    diagnosis: shownDiagnosis ? { ...shownDiagnosis, findingsOmitted: (diagnosis?.findings.length ?? 0) - shownDiagnosis.findings.length } : null,
    /** Attach mode: the exo causes (failed runner with exo's diagnostics, node lost, two ring models with fast synch on, ...). */
    exoDiagnosis: r.value(exoCauses),
  };
  const manifestData = json(manifest);
  const readme = Buffer.from(
    readmeText({
      version: ctx.version,
      exportedAt: manifest.exportedAt,
      source: manifest.source,
      // The README is listed without a size: it is the file being written ("README.txt (0 bytes)" read as empty).
      files: [{ name: 'README.txt', bytes: null }, { name: 'manifest.json', bytes: manifestData.length }, ...listed],
      redactions,
      truncated,
      diagnosis: shownDiagnosis,
      exoCauses: r.value(exoCauses),
    }),
    'utf8',
  );
  const all = [{ name: 'README.txt', data: readme }, { name: 'manifest.json', data: manifestData }, ...files];
  return {
    files: all,
    redactions,
    totalBytes: all.reduce((sum, f) => sum + f.data.length, 0),
    truncated,
    diagnosis,
    exportedAt,
  };
}
