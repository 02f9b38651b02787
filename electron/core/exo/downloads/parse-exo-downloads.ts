/**
 * exo's `downloads` section: per node, one entry per model card exo knows
 * (exo 0.3.70, src/exo/shared/types/worker/downloads.py). `DownloadPending` is listed for every
 * built-in card (123 of 125 entries on a real node) and is never a download anyone
 * started: it is skipped unread. The others are read:
 *
 * - `DownloadOngoing.downloadProgress`: bytes as `downloaded`/`total` (exo 0.3.70; the
 *   harness in exo's tools reads these) or `downloadedBytes`/`totalBytes` (earlier
 *   exo; exo's own macOS app still decodes these names), plus `speed` (bytes/s),
 *   `etaMs`, `completedFiles`/`totalFiles`;
 * - `DownloadCompleted` (`total` in 0.3.70, `totalBytes` before, or none);
 * - `DownloadFailed.errorMessage`.
 *
 * Entries a schema cannot read are problems, one each, never fatal.
 */
import { z } from 'zod';
import { BytesSchema, exoObject, firstIssue, isPlainObject, maybe, untag } from '../attach/exo-schema-helpers';
import type { ExoParseProblem } from '../attach/parse-exo-state';

export type ExoDownloadStatus = 'ongoing' | 'completed' | 'failed';

/** One model's download on one node, as exo reports it. */
export interface ExoDownload {
  nodeId: string;
  modelId: string;
  status: ExoDownloadStatus;
  downloadedBytes: number | null;
  totalBytes: number | null;
  /** exo's own figures (bytes/s, ms), for ongoing downloads. */
  exoSpeed: number | null;
  exoEtaMs: number | null;
  completedFiles: number | null;
  totalFiles: number | null;
  errorMessage: string | null;
}

export interface ParsedDownloads {
  downloads: ExoDownload[];
  /** DownloadPending entries skipped. */
  pending: number;
  problems: ExoParseProblem[];
  unknownTags: number;
}

const ShardSchema = z.record(z.string(), exoObject({ modelCard: exoObject({ modelId: z.string() }) }));

const ProgressSchema = exoObject({
  downloaded: maybe(BytesSchema),
  total: maybe(BytesSchema),
  downloadedBytes: maybe(BytesSchema),
  totalBytes: maybe(BytesSchema),
  speed: maybe(z.number()),
  etaMs: maybe(z.number()),
  completedFiles: maybe(z.number()),
  totalFiles: maybe(z.number()),
});

const BodySchema = exoObject({
  shardMetadata: ShardSchema,
  downloadProgress: maybe(ProgressSchema),
  total: maybe(BytesSchema),
  totalBytes: maybe(BytesSchema),
  errorMessage: maybe(z.string()),
});

const STATUS: Readonly<Record<string, ExoDownloadStatus>> = { DownloadOngoing: 'ongoing', DownloadCompleted: 'completed', DownloadFailed: 'failed' };

const orNull = (value: number | null | undefined): number | null => value ?? null;

/** Reads `/state/downloads` (`{nodeId: [tagged entry, …]}`). */
export function parseDownloads(raw: unknown): ParsedDownloads {
  const out: ParsedDownloads = { downloads: [], pending: 0, problems: [], unknownTags: 0 };
  const problem = (key: string | null, message: string) => out.problems.push({ section: 'downloads', key, message });
  if (!isPlainObject(raw)) {
    problem(null, 'not an object of node ids');
    return out;
  }
  for (const [nodeId, list] of Object.entries(raw)) {
    if (!Array.isArray(list)) {
      problem(nodeId, 'not a list');
      continue;
    }
    for (const [index, entry] of list.entries()) {
      // The cheap test first: all but a few entries are DownloadPending.
      if (isPlainObject(entry) && 'DownloadPending' in entry) {
        out.pending++;
        continue;
      }
      const tagged = untag(entry);
      const status = tagged ? STATUS[tagged.tag] : undefined;
      if (!tagged || !status) {
        if (tagged) out.unknownTags++;
        else problem(`${nodeId}[${index}]`, 'not a tagged download entry');
        continue;
      }
      const parsed = BodySchema.safeParse(tagged.body);
      const modelId = parsed.success ? Object.values(parsed.data.shardMetadata)[0]?.modelCard.modelId : undefined;
      if (!parsed.success || !modelId) {
        problem(`${nodeId}[${index}]`, parsed.success ? 'no model id in its shard' : firstIssue(parsed.error));
        continue;
      }
      const body = parsed.data;
      const progress = body.downloadProgress;
      out.downloads.push({
        nodeId,
        modelId,
        status,
        downloadedBytes: orNull(progress?.downloaded ?? progress?.downloadedBytes),
        totalBytes: orNull(progress?.total ?? progress?.totalBytes ?? body.total ?? body.totalBytes),
        exoSpeed: orNull(progress?.speed),
        exoEtaMs: orNull(progress?.etaMs),
        completedFiles: orNull(progress?.completedFiles),
        totalFiles: orNull(progress?.totalFiles),
        errorMessage: body.errorMessage ?? null,
      });
    }
  }
  return out;
}
