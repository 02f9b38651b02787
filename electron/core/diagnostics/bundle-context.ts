/**
 * What a diagnostic bundle is built from, and its size limits. The API server, the
 * CLI and the Electron app each fill one {@link DiagnosticContext}.
 */
import type { ExoBundleSource } from '../exo/attach/exo-attachment';
import type { ExoLogBundleFile } from '../exo-process/exo-logs';
import type { Redactor } from './redaction';
import type { ExobarNode } from '../node/node-types';
import type { DiagnosisOptions } from './diagnosis';
import type { Identity } from './redaction';
import type { SystemInfo } from './system-info';

/** The parts of the node the bundle reads. */
export type DiagnosticNode = Pick<ExobarNode, 'snapshot' | 'recentEvents' | 'requestTimelines' | 'runnerLogs'>;

export interface BundleLimits {
  /** Upper bound of the sum of all files' sizes (uncompressed, so the zip is smaller still). */
  maxTotalBytes: number;
  /** Cap of one runner log tail; lowered when many runners must share the total. */
  maxLogBytesPerFile: number;
  /** Cap of events.jsonl (the most recent events are kept). */
  maxEventsBytes: number;
  /** Cap of timeline.csv (the most recent requests are kept). */
  maxTimelineBytes: number;
  /** Runners whose logs are included (the node's current instances first). */
  maxRunners: number;
  /** Findings listed in the manifest's diagnosis (bugs and the slowest first; the summary counts all). */
  maxFindings: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  // "Under 10 MB" with room to spare for the zip's own headers.
  maxTotalBytes: 9 * 1024 * 1024,
  maxLogBytesPerFile: 512 * 1024,
  // The node's whole ring buffer (20,000 events) fits: the lead-up to a stall matters most.
  maxEventsBytes: 4 * 1024 * 1024,
  maxTimelineBytes: 1024 * 1024,
  maxRunners: 16,
  maxFindings: 200,
};

export interface DiagnosticContext {
  /** The running node; null when exporting from a data directory with no node running. */
  node: DiagnosticNode | null;
  /** This Mac's exo as exobar runs it: its stdout and stderr tails become `exo/exo-stdout.log` and `exo/exo-stderr.log`. */
  exoProcess?: { diagnosticLogTails(redactor: Redactor, capBytes?: number): ExoLogBundleFile[] } | null;
  /** Where runner logs (logs/<instance>/), the token and settings.json live; null when unknown. */
  dataDir: string | null;
  /** The settings in effect (secrets are removed before they enter the bundle); null reads <dataDir>/settings.json. */
  settings: unknown;
  /** exobar's version. */
  version: string;
  /** Literal secrets to redact besides the ones found automatically (the control token in <dataDir>/token and EXOBAR_TOKEN). */
  secrets?: readonly string[];
  limits?: Partial<BundleLimits>;
  diagnosis?: Partial<Omit<DiagnosisOptions, 'now'>>;
  /** Attach mode: the attached exo's last state, status history, poll errors and log folder (the bundle's exo/ folder); absent or null when none is attached. */
  exo?: () => ExoBundleSource | null;
  /** The history's aggregates (electron/core/history/): `history.json`; absent: no such file. */
  history?: () => unknown;
  /** Overrides the machine's identity for redaction (tests). */
  identity?: Partial<Identity>;
  /** Overrides system information (tests, benchmarks). */
  systemInfo?: () => Promise<SystemInfo>;
  /** Monotonic clock of the node's process; defaults to performance.now(). */
  now?: () => number;
}

export function resolveLimits(limits: Partial<BundleLimits> | undefined): BundleLimits {
  return { ...DEFAULT_BUNDLE_LIMITS, ...limits };
}

/** One file of the bundle: its path in the zip and its bytes. */
export interface BundleFile {
  name: string;
  data: Buffer;
}

/** A file left shorter than its source to stay within the limits, with what was left out. */
export interface TruncatedFile {
  name: string;
  omitted: string;
}

/** A value as a bundle file's bytes: indented JSON with a final newline. */
export const jsonBytes = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
