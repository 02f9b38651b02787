/**
 * Snapshots whose exo part is the real mapper's output: a fake exo over real HTTP, an
 * ExoMonitor attached to it on a test clock, and the view it maps, merged into a
 * snapshot as the node does. View and tray tests start from these, never from
 * hand-written exo shapes.
 */
import { emptySnapshot, type Snapshot } from '../../../shared/snapshot';
import { attachToFake, type AttachHarness } from './attach-harness';
import { FakeExoCluster } from './fake-cluster';
import { QWEN_30B, demoCluster } from './scenarios';

export interface MappedSnapshotOptions {
  /** The cluster (default: the demo, two models on one Mac, a queue, a pending cancel, a failed runner). */
  build?: (now: () => number) => FakeExoCluster;
  /** Poll rounds, 0.5 s apart, before the snapshot is taken (default 2). */
  rounds?: number;
  /** Moves the fake or the clock after the first rounds (drop the node, refuse connections, ...). */
  then?: (h: AttachHarness) => Promise<void>;
}

/** Attaches to a fake exo, polls, and returns the snapshot the node would build (exo part only). */
export async function mappedExoSnapshot(options: MappedSnapshotOptions = {}): Promise<Snapshot> {
  const h = await attachToFake(options.build ?? demoCluster);
  try {
    for (let i = 0; i < (options.rounds ?? 2); i++) await h.round();
    await options.then?.(h);
    const view = h.monitor.view();
    return { ...emptySnapshot(), seq: 1, at: h.clock.now, version: '0.1.0', instances: view.instances, warnings: view.warnings, exo: view.section };
  } finally {
    await h.close();
  }
}

function twoMacs(now: () => number): FakeExoCluster {
  const cluster = new FakeExoCluster(now);
  cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', ramGb: 256 });
  cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', model: 'Mac mini', ramGb: 64 });
  return cluster;
}

/** A prompt planted in the loading scenario: no view may show it. */
export const PLANTED_PROMPT = 'A prompt that must never reach the page';

/** The states the views are tested in, each the mapper's output for a fake cluster. */
export interface ViewScenarios {
  /** The demo: two models on studio-a with a queue and a pending cancel, a failed runner on mini-b. */
  demo: Snapshot;
  /** Qwen sharded over both Macs, its runners loading, one request waiting for the load. */
  loading: Snapshot;
  /** The demo, then exo stops answering. */
  unreachable: Snapshot;
  /** exo restarted with new ids and the model placed again: matched by model. */
  restarted: Snapshot;
}

/** Builds every {@link ViewScenarios} snapshot (each over its own fake exo). */
export async function viewScenarios(): Promise<ViewScenarios> {
  const demo = await mappedExoSnapshot();
  const loading = await mappedExoSnapshot({
    build: (now) => {
      const cluster = twoMacs(now);
      cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'] });
      cluster.step(4);
      cluster.submit(QWEN_30B, PLANTED_PROMPT);
      return cluster;
    },
  });
  const unreachable = await mappedExoSnapshot({
    then: async (h) => {
      await h.fake.refuse();
      await h.round(1_000);
    },
  });
  const restarted = await mappedExoSnapshot({
    build: (now) => {
      const cluster = twoMacs(now);
      cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
      return cluster;
    },
    then: async (h) => {
      h.cluster.restartNode('studio-a');
      await h.round(5_000);
      h.cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a'], ready: true });
      await h.round();
    },
  });
  return { demo, loading, unreachable, restarted };
}
