/**
 * A fake exo and an ExoMonitor attached to it over real HTTP, on a clock the test
 * moves: `round()` is one poll round at the current time.
 */
import type { ExoMonitor, ExoMonitorOptions } from '../../../electron/core/exo/attach/exo-monitor';
import { FakeExoCluster } from './fake-cluster';
import { startFakeExo, type FakeExo } from './fake-exo-server';

export interface AttachHarness {
  fake: FakeExo;
  cluster: FakeExoCluster;
  monitor: ExoMonitor;
  clock: { now: number };
  /** Moves the clock by `ms` and runs one poll round. */
  round(ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a fake exo with the cluster `build` makes, and a monitor attached to it (not started: rounds are manual). */
export async function attachToFake(build: (now: () => number) => FakeExoCluster, options: Partial<ExoMonitorOptions> = {}): Promise<AttachHarness> {
  const clock = { now: 1_800_000_000_000 };
  const now = () => clock.now;
  const cluster = build(now);
  const fake = await startFakeExo({ cluster });
  // Loaded here: the fake's entry module exports this harness, and what only runs the fake (the `exo` command) must not load exobar's monitor.
  const { ExoMonitor } = await import('../../../electron/core/exo/attach/exo-monitor');
  const monitor = new ExoMonitor({ url: fake.url, now, exoLogPath: null, ...options });
  return {
    fake,
    cluster,
    monitor,
    clock,
    async round(ms = 500) {
      clock.now += ms;
      await monitor.tick();
    },
    async close() {
      await monitor.stop();
      await fake.close();
    },
  };
}
