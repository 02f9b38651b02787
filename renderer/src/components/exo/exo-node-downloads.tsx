import type { ExoDownloadSnapshot } from '../../../../shared/exo-snapshot';
import { formatAge, formatBytes, NA } from '../../lib/format';
import { ProgressBar } from '../common/progress-bar';

/** Bytes per second in MB/s ("48 MB/s"): download speeds, not memory. */
function formatSpeed(bytesPerSecond: number | null): string {
  if (bytesPerSecond === null) return NA;
  return `${(bytesPerSecond / 1e6).toFixed(bytesPerSecond < 1e7 ? 1 : 0)} MB/s`;
}

const shortModel = (modelId: string) => modelId.split('/').pop() ?? modelId;

/**
 * A Mac's model downloads as exo reports them: each ongoing one with its bytes, percent,
 * speed and time left (worked out from successive polls), each failed one with exo's
 * message. Completed ones are counted only (they are models on disk, not news); the
 * pending entry exo keeps for every known model card is never a download.
 */
export function ExoNodeDownloads({ downloads, nodeName }: { downloads: ExoDownloadSnapshot[]; nodeName: string }) {
  const shown = downloads.filter((d) => d.status !== 'completed');
  if (shown.length === 0) return null;
  return (
    <ul className="exo-downloads" aria-label={`Downloads on ${nodeName}`}>
      {shown.map((d) =>
        d.status === 'ongoing' ? (
          <li key={d.modelId} data-testid="exo-download" data-status="ongoing" data-model={d.modelId}>
            <div className="row">
              <span className="badge info">downloading</span>
              <span className="ellipsis" title={d.modelId}>
                {shortModel(d.modelId)}
              </span>
            </div>
            <div className="row">
              <span className="tabular" data-testid="exo-download-progress">
                {d.percent === null ? NA : `${Math.floor(d.percent)}%`} · {formatBytes(d.downloadedBytes)} of {formatBytes(d.totalBytes)} ·{' '}
                {formatSpeed(d.bytesPerSecond)} · {d.etaMs === null ? 'time left unknown' : `${formatAge(d.etaMs)} left`}
              </span>
            </div>
            {d.totalBytes !== null && d.downloadedBytes !== null && (
              <ProgressBar value={d.downloadedBytes} max={d.totalBytes} label={`Downloading ${shortModel(d.modelId)} on ${nodeName}`} />
            )}
          </li>
        ) : (
          <li key={d.modelId} className="row" data-testid="exo-download" data-status="failed" data-model={d.modelId}>
            <span className="badge warn">download failed</span>
            <span className="ellipsis" title={d.modelId}>
              {shortModel(d.modelId)}
            </span>
            <span className="failure small">{d.errorMessage ?? 'exo gave no reason'}</span>
          </li>
        ),
      )}
    </ul>
  );
}
