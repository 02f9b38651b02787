/**
 * A snapshot of exo generating a cancelled request for nobody, as the real mapper makes
 * it: the fake cluster cancels a running request the way exo 0.3.70 does (Cancelled,
 * then deleted, the runner never told, so it stays RunnerRunning with no task) and the
 * monitor polls it for a few seconds on its test clock.
 */
import type { Snapshot } from '../../../shared/snapshot';
import { FakeExoCluster } from './fake-cluster';
import { mappedExoSnapshot } from './mapped-snapshot';
import { LLAMA_1B, LLAMA_3B } from './scenarios';

/** Llama 1B on studio-a still generating a request cancelled about 9 s ago, beside a Llama 3B. */
export function ghostSnapshot(): Promise<Snapshot> {
  return mappedExoSnapshot({
    build: (now) => {
      const cluster = new FakeExoCluster(now);
      cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 96 });
      cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
      cluster.addInstance({ model: LLAMA_3B, nodes: ['studio-a'], ready: true });
      const taskId = cluster.submit(LLAMA_1B, '(prompt redacted by the fake exo)');
      cluster.task(taskId).body.taskStatus = 'Running';
      const runnerId = cluster.instancesOf(LLAMA_1B)[0]!.shards[0]!.runnerId;
      cluster.runners.set(runnerId, { RunnerRunning: {} });
      // The cancel: TaskCancelled, then TaskFinished deletes it; the runner goes on.
      cluster.task(taskId).body.taskStatus = 'Cancelled';
      cluster.tasks.delete(taskId);
      return cluster;
    },
    // 0.5 s apart: the ghost seen for 9 s.
    rounds: 19,
  });
}
