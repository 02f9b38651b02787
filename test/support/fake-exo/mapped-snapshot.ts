/**
 * Snapshots whose exo part is the real mapper's output: a fake exo over real HTTP, an
 * ExoMonitor attached to it on a test clock, and the view it maps, merged into a
 * snapshot as the node does. View and tray tests start from these, never from
 * hand-written exo shapes.
 */
import { emptySnapshot, type Snapshot } from '../../../shared/snapshot';
import { attachToFake, type AttachHarness } from './attach-harness';
import type { FakeExoCluster } from './fake-cluster';
import { demoCluster } from './scenarios';

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
