/**
 * A snapshot with model downloads on the Macs, as the real mapper makes it: the fake
 * exo lists an ongoing download (moving between two polls 5 s apart) and a failed one
 * beside the pending cards of every other model.
 */
import type { Snapshot } from '../../../shared/snapshot';
import { FakeExoCluster } from './fake-cluster';
import { startFakeDownload, type FakeDownload } from './fake-downloads';
import { mappedExoSnapshot } from './mapped-snapshot';
import { GPT_OSS_20B, LLAMA_1B, QWEN_30B } from './scenarios';

const GB = 1024 ** 3;

/** studio-a downloading Qwen3-30B (4.2 of 16 GB, 80 MB/s), mini-b's download of gpt-oss failed. */
export function downloadsSnapshot(): Promise<Snapshot> {
  let qwen: FakeDownload | null = null;
  return mappedExoSnapshot({
    build: (now) => {
      const cluster = new FakeExoCluster(now);
      cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 256 });
      cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', model: 'Mac mini', ramGb: 64 });
      for (const node of cluster.nodes) node.downloadCards = 123;
      cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
      qwen = startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB);
      qwen.progress(3.8 * GB, 8e7);
      startFakeDownload(cluster, 'mini-b', GPT_OSS_20B, 12 * GB).fail('Not enough disk space: 9.8 GB free, 12.0 GB needed');
      return cluster;
    },
    rounds: 1,
    then: async (h) => {
      qwen!.progress(3.8 * GB + 5 * 8e7, 8e7);
      await h.round(5_000);
    },
  });
}
