/**
 * Download progress over time: exobar's own speed and time left from the bytes of
 * successive polls (exo's `speed` and `etaMs` are per-session figures that reset when
 * a download resumes; what an operator wants is the rate now). Until two polls have
 * seen bytes move, exo's figures are shown, and unknown when exo has none.
 */
import type { ExoDownloadSnapshot } from '../../../../shared/exo-snapshot';
import type { ExoDownload } from './parse-exo-downloads';

interface Sample {
  at: number;
  bytes: number;
}

export class ExoDownloadProgress {
  private readonly samples = new Map<string, Sample>();
  private readonly rates = new Map<string, number>();
  private current: ExoDownload[] = [];

  /** Takes in the downloads of one poll of /state/downloads at `at` (epoch ms). */
  observe(at: number, downloads: ExoDownload[]): void {
    this.current = downloads;
    const seen = new Set<string>();
    for (const d of downloads) {
      const key = `${d.nodeId}\u0000${d.modelId}`;
      seen.add(key);
      if (d.status !== 'ongoing' || d.downloadedBytes === null) continue;
      const before = this.samples.get(key);
      if (before && at > before.at && d.downloadedBytes >= before.bytes) this.rates.set(key, ((d.downloadedBytes - before.bytes) / (at - before.at)) * 1000);
      if (!before || at > before.at) this.samples.set(key, { at, bytes: d.downloadedBytes });
    }
    for (const key of [...this.samples.keys()]) {
      if (seen.has(key)) continue;
      this.samples.delete(key);
      this.rates.delete(key);
    }
  }

  /** The downloads of one node as the snapshot shows them: ongoing first, then failed, then completed. */
  forNode(nodeId: string): ExoDownloadSnapshot[] {
    const order: Record<ExoDownload['status'], number> = { ongoing: 0, failed: 1, completed: 2 };
    return this.current
      .filter((d) => d.nodeId === nodeId)
      .sort((a, b) => order[a.status] - order[b.status] || a.modelId.localeCompare(b.modelId))
      .map((d) => {
        const rate = this.rates.get(`${d.nodeId}\u0000${d.modelId}`) ?? d.exoSpeed;
        const left = d.totalBytes !== null && d.downloadedBytes !== null ? Math.max(0, d.totalBytes - d.downloadedBytes) : null;
        const percent =
          d.status === 'completed' ? 100 : d.totalBytes && d.downloadedBytes !== null ? Math.min(100, (d.downloadedBytes / d.totalBytes) * 100) : null;
        return {
          modelId: d.modelId,
          status: d.status,
          downloadedBytes: d.downloadedBytes,
          totalBytes: d.totalBytes,
          percent: percent === null ? null : Math.round(percent * 10) / 10,
          bytesPerSecond: d.status === 'ongoing' && rate !== null ? Math.round(rate) : null,
          etaMs: d.status !== 'ongoing' ? null : rate && left !== null ? Math.round((left / rate) * 1000) : d.exoEtaMs,
          errorMessage: d.errorMessage,
        };
      });
  }
}
