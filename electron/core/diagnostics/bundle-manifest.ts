/**
 * The bundle's two files written last, because they describe the others: manifest.json
 * (versions, clocks, limits, every file with its size, the redaction counts, what was
 * cut, the diagnosis) and README.txt (the same in words for whoever opens the zip).
 */
import { jsonBytes, type BundleFile, type BundleLimits, type DiagnosticContext, type TruncatedFile } from './bundle-context';
import type { Diagnosis } from './diagnosis';
import type { diagnoseExo } from './exo-diagnosis';
import { readmeText } from './readme-text';
import type { RedactionCounts } from './redaction';
import type { SystemInfo } from './system-info';

export interface FinalFilesInput {
  /** Every other file of the bundle, in order. */
  files: readonly BundleFile[];
  redactions: RedactionCounts;
  truncated: TruncatedFile[];
  limits: BundleLimits;
  exportedAt: Date;
  /** The monotonic clock at export. */
  now: number;
  systemInfo: SystemInfo;
  diagnosis: Diagnosis | null;
  /** The diagnosis as shown: redacted, its findings ranked and capped. */
  shownDiagnosis: Diagnosis | null;
  /** The exo causes, redacted. */
  exoCauses: ReturnType<typeof diagnoseExo>;
}

/** README.txt and manifest.json, in that order. */
export function finalBundleFiles(ctx: DiagnosticContext, input: FinalFilesInput): BundleFile[] {
  const { files, redactions, truncated, limits, exportedAt, now, diagnosis, shownDiagnosis } = input;
  const listed = files.map((f) => ({ name: f.name, bytes: f.data.length }));
  const manifest = {
    bundleFormat: 1,
    exobarVersion: ctx.version,
    platform: process.platform,
    arch: process.arch,
    osRelease: input.systemInfo.osRelease,
    nodeVersion: process.versions.node,
    electronVersion: process.versions.electron ?? null,
    exportedAt: exportedAt.toISOString(),
    /** The monotonic clock of events.jsonl and timeline.csv at export: t_epoch = exportedAtEpochMs - (monotonicNowMs - t). */
    exportedAtEpochMs: exportedAt.getTime(),
    monotonicNowMs: Math.round(now * 10) / 10,
    processUptimeS: Math.round(process.uptime()),
    systemUptimeS: input.systemInfo.systemUptimeS,
    source: (ctx.node ? 'running node' : 'data directory') as 'running node' | 'data directory',
    limits,
    files: listed,
    redactions,
    truncated,
    diagnosis: shownDiagnosis ? { ...shownDiagnosis, findingsOmitted: (diagnosis?.findings.length ?? 0) - shownDiagnosis.findings.length } : null,
    /** Attach mode: the exo causes (failed runner with exo's diagnostics, node lost, two ring models with fast synch on, ...). */
    exoDiagnosis: input.exoCauses,
  };
  const manifestData = jsonBytes(manifest);
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
      exoCauses: input.exoCauses,
    }),
    'utf8',
  );
  return [
    { name: 'README.txt', data: readme },
    { name: 'manifest.json', data: manifestData },
  ];
}
