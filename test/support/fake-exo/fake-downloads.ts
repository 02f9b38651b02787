/**
 * Model downloads in the fake exo's `downloads` section, in exo 0.3.70's shapes
 * (src/exo/shared/types/worker/downloads.py; the harness in exo's tools reads
 * `downloadProgress.{downloaded,total}.inBytes`, `speed`, `etaMs`, `completedFiles`,
 * `totalFiles`): a download started on a node moves through DownloadOngoing to
 * DownloadCompleted or DownloadFailed, listed beside the pending entry exo keeps for
 * every other card. `oldNames` writes the names exo used before (`downloadedBytes`,
 * `totalBytes`), which exo's own macOS app still reads.
 */
import type { FakeExoCluster } from './fake-cluster';
import { modelCard, wholeModelShard, type Json } from './fixture-data';

export interface FakeDownload {
  /** Bytes so far: the next poll shows them (exo's own speed figure follows). */
  progress(downloadedBytes: number, speedBytesPerS?: number): void;
  complete(): void;
  fail(message: string): void;
}

const entries = new WeakMap<FakeExoCluster, Map<string, Map<string, Json>>>();

/** The download entries the fake lists for a node (before its pending cards). */
export function fakeDownloadEntries(cluster: FakeExoCluster, nodeId: string): Json[] {
  return [...(entries.get(cluster)?.get(nodeId)?.values() ?? [])];
}

/** Starts a download of `model` on the node named `nodeName`. */
export function startFakeDownload(
  cluster: FakeExoCluster,
  nodeName: string,
  model: string,
  totalBytes: number,
  options: { oldNames?: boolean } = {},
): FakeDownload {
  const node = cluster.node(nodeName);
  const card = modelCard(model, 16);
  const base = () => ({
    nodeId: node.id,
    shardMetadata: wholeModelShard(card),
    modelDirectory: `/Users/ops/.exo/models/${model.replace('/', '--')}`,
  });
  const perNode = entries.get(cluster) ?? new Map<string, Map<string, Json>>();
  entries.set(cluster, perNode);
  const list = perNode.get(node.id) ?? new Map<string, Json>();
  perNode.set(node.id, list);
  const set = (entry: Json) => {
    list.set(model, entry);
    cluster.event();
  };
  const ongoing = (downloaded: number, speed: number) => {
    const left = totalBytes - downloaded;
    const bytes = options.oldNames
      ? { totalBytes: { inBytes: totalBytes }, downloadedBytes: { inBytes: downloaded }, downloadedBytesThisSession: { inBytes: downloaded } }
      : { total: { inBytes: totalBytes }, downloaded: { inBytes: downloaded }, downloadedThisSession: { inBytes: downloaded } };
    set({
      DownloadOngoing: {
        ...base(),
        downloadProgress: { ...bytes, completedFiles: 0, totalFiles: 4, speed, etaMs: speed > 0 ? Math.round((left / speed) * 1000) : 0, files: {} },
      },
    });
  };
  ongoing(0, 0);
  return {
    progress: (downloaded, speed = 0) => ongoing(downloaded, speed),
    complete: () => set({ DownloadCompleted: { ...base(), total: { inBytes: totalBytes }, readOnly: false } }),
    fail: (message) => set({ DownloadFailed: { ...base(), errorMessage: message } }),
  };
}
