/**
 * exo's downloads: the real capture's 123 pending cards are never downloads, its two
 * completed ones are; ongoing downloads are read under exo 0.3.70's names and the
 * earlier ones; a failed one keeps exo's message; and against the fake exo over HTTP,
 * the Mac's row in the snapshot has bytes, percent, speed and time left from
 * successive polls.
 */
import { describe, expect, it } from 'vitest';
import { attachToFake, FakeExoCluster, startFakeDownload, readReal, LLAMA_1B, QWEN_30B } from '../../../../test/support/fake-exo';
import { ExoDownloadProgress } from './exo-download-progress';
import { parseDownloads } from './parse-exo-downloads';

const GB = 1024 ** 3;
const ongoing = (progress: Record<string, unknown>) => ({
  node: [{ DownloadOngoing: { nodeId: 'node', shardMetadata: { PipelineShardMetadata: { modelCard: { modelId: QWEN_30B } } }, downloadProgress: progress } }],
});

describe("exo's downloads section", () => {
  it('skips the pending cards of the real capture and reads its completed downloads', () => {
    const parsed = parseDownloads(readReal('state-ready.json').downloads);
    expect(parsed.problems).toEqual([]);
    expect(parsed.unknownTags).toBe(0);
    expect(parsed.pending).toBe(123);
    expect(parsed.downloads.map((d) => [d.modelId, d.status])).toEqual([
      ['exobar/tiny-llama', 'completed'],
      ['exobar/tiny-llama-b', 'completed'],
    ]);
    // The bytes on disk, as exo counted them (the card says 1 111 704).
    expect(parsed.downloads[0]!.totalBytes).toBe(1_135_210);
  });

  it("reads an ongoing download under exo 0.3.70's names (downloaded, total) and the earlier ones (downloadedBytes, totalBytes)", () => {
    const now = parseDownloads(
      ongoing({ downloaded: { inBytes: 4 * GB }, total: { inBytes: 16 * GB }, speed: 1e8, etaMs: 120_000, completedFiles: 1, totalFiles: 4, files: {} }),
    );
    const before = parseDownloads(
      ongoing({ downloadedBytes: { inBytes: 4 * GB }, totalBytes: { inBytes: 16 * GB }, speed: 1e8, etaMs: 120_000, completedFiles: 1, totalFiles: 4 }),
    );
    for (const parsed of [now, before]) {
      expect(parsed.problems).toEqual([]);
      expect(parsed.downloads).toEqual([
        expect.objectContaining({ modelId: QWEN_30B, status: 'ongoing', downloadedBytes: 4 * GB, totalBytes: 16 * GB, exoSpeed: 1e8, exoEtaMs: 120_000 }),
      ]);
    }
  });

  it("keeps a failed download's message, counts an unknown tag and a broken entry, each on its own", () => {
    const parsed = parseDownloads({
      n: [
        {
          DownloadFailed: {
            nodeId: 'n',
            shardMetadata: { PipelineShardMetadata: { modelCard: { modelId: LLAMA_1B } } },
            errorMessage: 'HTTP 403 from huggingface.co',
          },
        },
        { DownloadPaused: { nodeId: 'n' } },
        { DownloadOngoing: { nodeId: 'n' } },
      ],
    });
    expect(parsed.downloads).toEqual([expect.objectContaining({ modelId: LLAMA_1B, status: 'failed', errorMessage: 'HTTP 403 from huggingface.co' })]);
    expect(parsed.unknownTags).toBe(1);
    expect(parsed.problems).toHaveLength(1);
  });

  it('works out speed and time left from successive polls', () => {
    const progress = new ExoDownloadProgress();
    const at = (t: number, bytes: number) =>
      progress.observe(t, parseDownloads(ongoing({ downloaded: { inBytes: bytes }, total: { inBytes: 10 * GB }, speed: 0, etaMs: 0 })).downloads);
    at(0, 1 * GB);
    expect(progress.forNode('node')[0]).toMatchObject({ percent: 10, bytesPerSecond: 0 });
    at(5_000, 2 * GB);
    const [d] = progress.forNode('node');
    expect(d).toMatchObject({ status: 'ongoing', downloadedBytes: 2 * GB, percent: 20 });
    expect(d!.bytesPerSecond).toBe(Math.round(GB / 5));
    expect(d!.etaMs).toBe(40_000);
  });
});

describe('downloads on the Mac row, against the fake exo', () => {
  it('shows an ongoing download with its progress, then a failure with exo’s message; pending cards never', async () => {
    let download: ReturnType<typeof startFakeDownload> | null = null;
    const h = await attachToFake((now) => {
      const cluster = new FakeExoCluster(now);
      cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', ramGb: 256 });
      cluster.nodes[0]!.downloadCards = 123;
      cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
      download = startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB);
      return cluster;
    });
    try {
      download!.progress(2 * GB, 1e8);
      await h.round();
      download!.progress(4 * GB, 1e8);
      await h.round(5_000);
      const node = h.monitor.view().section.nodes[0]!;
      // The placed model's completed download and the ongoing one; none of the 123 pending cards.
      expect(node.downloads.map((d) => [d.modelId, d.status])).toEqual([
        [QWEN_30B, 'ongoing'],
        [LLAMA_1B, 'completed'],
      ]);
      expect(node.downloads[0]).toMatchObject({
        downloadedBytes: 4 * GB,
        totalBytes: 16 * GB,
        percent: 25,
        bytesPerSecond: Math.round((2 * GB) / 5),
        etaMs: 30_000,
      });
      expect(h.monitor.view().section.parseErrors).toBe(0);
      download!.fail('Not enough disk space on studio-a');
      await h.round(5_000);
      expect(h.monitor.view().section.nodes[0]!.downloads[0]).toMatchObject({
        modelId: QWEN_30B,
        status: 'failed',
        errorMessage: 'Not enough disk space on studio-a',
        etaMs: null,
      });
    } finally {
      await h.close();
    }
  });
});
