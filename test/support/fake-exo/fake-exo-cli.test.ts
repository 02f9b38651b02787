import { afterEach, describe, expect, it } from 'vitest';
import { ExoMonitor } from '../../../electron/core/exo/attach/exo-monitor';
import { probeExo } from '../../../electron/core/exo/attach/exo-probe';
import { startFakeExoProcess, type FakeExoProcess } from './fake-exo-process';
import { sleep } from '../eventually';

let fake: FakeExoProcess | null = null;
afterEach(async () => {
  await fake?.stop();
  fake = null;
});

describe('npm run fake-exo', () => {
  it('serves the demo: two models on one Mac, a queue, a pending cancellation, a failed runner on a second Mac', async () => {
    fake = await startFakeExoProcess('demo', 200);
    expect(await probeExo(fake.url)).toMatchObject({ ok: true, nodes: 2 });
    const monitor = new ExoMonitor({ url: fake.url, exoLogPath: null });
    await monitor.tick();
    const view = monitor.view();
    const onStudio = view.instances.filter((i) => i.exo.runners.some((r) => r.nodeName === 'studio-a'));
    expect(onStudio).toHaveLength(2);
    expect(view.instances.some((i) => i.queue.requests.length >= 2)).toBe(true);
    expect(view.instances.flatMap((i) => i.exo.pendingCancels)).toHaveLength(1);
    expect(view.warnings.map((w) => w.code).sort()).toEqual(['exo_runner_failed', 'two_ring_fast_synch']);
    // The demo moves: its lastSeen advances with every tick.
    const first = view.section.nodes[0]!.lastSeenAt!;
    await sleep(5_100);
    await monitor.tick();
    expect(monitor.view().section.nodes[0]!.lastSeenAt!).toBeGreaterThan(first);
    await monitor.stop();
  });
});
