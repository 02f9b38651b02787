/**
 * Ready-made clusters for the fake exo: the demo `npm run fake-exo` serves, the
 * realistic load the poll benchmark attaches to, and the one Mac a just-started `exo`
 * command (fake-exo-exe) serves.
 */
import { FakeExoCluster } from './fake-cluster';
import { metalTimeoutDiagnostic } from './fixture-data';

export const QWEN_30B = 'mlx-community/Qwen3-30B-A3B-4bit';
export const LLAMA_1B = 'mlx-community/Llama-3.2-1B-Instruct-4bit';
export const LLAMA_3B = 'mlx-community/Llama-3.2-3B-Instruct-4bit';
export const GPT_OSS_20B = 'mlx-community/gpt-oss-20b-MXFP4-Q8';

/** Model cards real exo lists per node in `downloads`. */
export const CARDS_PER_NODE = 123;

/**
 * Two models on one Mac (studio-a, the node exobar attaches to) with a queue and a
 * pending cancellation, and a failed runner on a second Mac (mini-b).
 */
export function demoCluster(now: () => number = Date.now): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 256 });
  cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', model: 'Mac mini', ramGb: 64 });
  cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
  cluster.addInstance({ model: LLAMA_1B, nodes: ['studio-a'], ready: true });
  cluster.addInstance({ model: LLAMA_3B, nodes: ['mini-b'], ready: true });
  for (let i = 0; i < 3; i++) cluster.submit(QWEN_30B, `Summarise report ${i + 1} in five bullet points.`);
  const cancelled = cluster.submit(QWEN_30B, 'Translate the following paragraph into German: ...');
  cluster.step();
  cluster.cancel(cancelled, { stuck: true });
  cluster.submit(LLAMA_1B, "Classify this ticket: 'VPN drops every 10 minutes'.");
  cluster.failRunner(LLAMA_3B, 'mini-b', { errorMessage: 'Terminated (signal=6 (Abort trap: 6))', diagnostics: [metalTimeoutDiagnostic()] });
  cluster.step();
  return cluster;
}

/** One Mac whose exo has just started: a node and nothing placed on it yet. */
export function startedMacCluster(name: string, now: () => number = Date.now): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name, chip: 'Apple M3 Ultra', model: 'Mac Studio', ramGb: 64 });
  return cluster;
}

/** Keeps the demo moving: the oldest Qwen request finishes and a new one arrives. */
export function demoTick(cluster: FakeExoCluster, tick: number): void {
  const [qwen] = cluster.instancesOf(QWEN_30B);
  if (qwen && tick % 3 === 0) {
    const running = cluster.generationTasks(qwen.id).find((t) => t.body.taskStatus === 'Running');
    if (running) cluster.finish(String(running.body.taskId));
    cluster.submit(QWEN_30B, `Request ${tick}`);
  }
  cluster.step();
}

/** The benchmark's load: 4 Macs with 123 cards each, 4 instances (ring and JACCL), 50 requests. */
export function benchCluster(now: () => number = Date.now): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  for (let i = 1; i <= 4; i++) {
    cluster.addNode({ name: `mac-${i}`, chip: 'Apple M3 Ultra', ramGb: 512 });
    cluster.nodes.at(-1)!.downloadCards = CARDS_PER_NODE;
  }
  cluster.addInstance({ model: QWEN_30B, nodes: ['mac-1', 'mac-2'], ready: true });
  cluster.addInstance({ model: LLAMA_1B, nodes: ['mac-1'], ready: true });
  cluster.addInstance({ model: LLAMA_3B, nodes: ['mac-3', 'mac-4'], kind: 'MlxJacclInstance', sharding: 'Tensor', ready: true });
  cluster.addInstance({ model: GPT_OSS_20B, nodes: ['mac-4'], ready: true });
  const models = [QWEN_30B, LLAMA_1B, LLAMA_3B, GPT_OSS_20B];
  for (let i = 0; i < 50; i++) cluster.submit(models[i % models.length]!, `Benchmark request ${i}: ${'lorem ipsum '.repeat(40)}`);
  cluster.step();
  return cluster;
}
