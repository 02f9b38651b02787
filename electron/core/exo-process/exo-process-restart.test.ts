/**
 * Restarts of a real (fake) exo: for another fast-synch value only with consent and
 * after the pidfile is released; after a crash with backoff and a cap; never on top
 * of runners that would not stop.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExoFastSynchPlan, ExoPlannedInstance } from '../../../shared/exo-fast-synch';
import { processAlive } from '../../../test/support/process-alive';
import { processesWithHome, fakeExoHome, receivedEnv, spawnSleeper } from '../../../test/support/fake-exo-exe/harness';
import { FAST_TIMING, fakeExoManager } from '../../../test/support/fake-exo-exe/manager-fixture';
import { backoffDelayMs } from '../../../shared/backoff';
import { eventually, sleep } from '../../../test/support/eventually';

const ring = (id: string): ExoPlannedInstance => ({ id, model: `model-${id}`, instanceType: 'ring', nodeCount: 1 });
const jaccl = (id: string): ExoPlannedInstance => ({ id, model: `model-${id}`, instanceType: 'jaccl', nodeCount: 2 });
const plan = (instances: ExoPlannedInstance[]): ExoFastSynchPlan => ({ instances, override: 'auto', acknowledgeRisk: false });

/** Runners that logged their "Fast synch flag" line (each sets its signal handlers first). */
function runnersUp(home: string): number {
  try {
    return (readFileSync(join(fakeExoHome(home), 'exo_log', 'exo.log'), 'utf8').match(/Fast synch flag/g) ?? []).length;
  } catch {
    return 0;
  }
}

describe('ExoProcessManager: restarts', () => {
  it('restarts for another fast-synch value only with consent, and only once the pidfile is released', async () => {
    const { manager, dirs, states } = await fakeExoManager();
    const first = await manager.start(plan([ring('a')]));
    expect(first.fastSynch?.enabled).toBe(false);
    const spanning = [{ id: 'a', model: 'model-a' }];
    const launchJaccl = plan([jaccl('b')]);

    const check = manager.checkFastSynch(launchJaccl, spanning);
    expect(check).toMatchObject({ ok: true, enabled: true, restartRequired: true });
    if (check.ok)
      expect(check.message).toMatch(/exo must restart to turn fast synch on.*deletes every instance that spans this Mac: model-a \(a\).*"consent": true/);
    expect(manager.state().restartNeeded).toMatchObject({ fastSynch: true });

    await expect(manager.applyFastSynch(launchJaccl, { consent: false, spanningInstances: spanning })).rejects.toMatchObject({
      code: 'exo_restart_required',
      status: 409,
    });
    expect(manager.state()).toMatchObject({ status: 'running', pid: first.pid });
    expect(processAlive(first.pid!)).toBe(true);

    // As soon as exo has stopped, another process takes the pidfile and keeps it for a second.
    const pidfile = join(fakeExoHome(dirs.home), 'exo.pid');
    let holder: ReturnType<typeof spawnSleeper> | null = null;
    let releasedAt = Infinity;
    const unsubscribe = manager.subscribe((s) => {
      if (s.status !== 'stopped' || holder) return;
      holder = spawnSleeper();
      writeFileSync(pidfile, `${holder.pid}\n`);
      setTimeout(() => {
        releasedAt = Date.now();
        holder!.kill();
      }, 1000);
    });
    const restarted = await manager.applyFastSynch(launchJaccl, { consent: true, spanningInstances: spanning });
    unsubscribe();

    expect(restarted).toMatchObject({ status: 'running', restartNeeded: null, fastSynch: { enabled: true, observed: true, mismatch: false } });
    expect(restarted.pid).not.toBe(first.pid);
    expect(processAlive(first.pid!)).toBe(false);
    expect(states.some((s) => s.status === 'restarting' && /exo\.pid to be released \(held by pid \d+\)/.test(s.progress ?? ''))).toBe(true);
    expect(restarted.startedAt!).toBeGreaterThanOrEqual(releasedAt);
    expect(receivedEnv(restarted.pid!, dirs.home).EXO_FAST_SYNCH).toBe('true');
  });

  it('restarts a crashed exo with backoff, stops the runners it orphaned, and gives up at the cap', async () => {
    const policy = { baseDelayMs: 300, maxDelayMs: 700, maxRestarts: 3, stableAfterMs: 60_000 };
    const { manager, dirs, states } = await fakeExoManager({ FAKE_EXO_EXIT_AFTER_MS: '300', FAKE_EXO_EXIT_CODE: '7' }, { crashPolicy: policy });
    await manager.start();
    // Four starts of a fake exo: seconds each on a loaded machine, so the bound is generous (it ends at the event).
    await eventually(() => /gave up/.test(manager.state().reason ?? ''), 150_000, 'the restarts to give up');

    const final = manager.state();
    expect(final).toMatchObject({ status: 'crashed', failure: 'crashed', exit: { code: 7, signal: null }, restarts: { count: 3, max: 3, nextAt: null } });
    expect(final.reason).toMatch(/exo exited on its own \(exit code 7\); gave up after 3 automatic restarts/);
    expect(final.lastLines.some((l) => l.includes('EXO terminated due to unhandled exception'))).toBe(true);

    // One spawn per start: the first and three restarts, each after its backoff delay.
    const starts = [...new Map(states.filter((s) => s.pid !== null && s.startedAt !== null).map((s) => [s.pid, s.startedAt!])).values()];
    expect(starts).toHaveLength(4);
    const crashes = [...new Map(states.filter((s) => s.exit !== null).map((s) => [s.exit!.at, s.exit!.at])).values()];
    for (let i = 0; i < 3; i += 1) {
      expect(starts[i + 1]! - crashes[i]!).toBeGreaterThanOrEqual(backoffDelayMs(i + 1, policy));
    }
    const scheduled = states.filter((s) => s.status === 'restarting' && s.restarts.nextAt !== null).map((s) => s.reason);
    expect(scheduled.map((r) => /restarting in ([\d.]+) s/.exec(r ?? '')?.[1])).toEqual(['0.3', '0.6', '0.7']);
    // Each crash orphaned a runner; exobar stopped every one.
    expect(processesWithHome(dirs.home)).toEqual([]);
  }, 180_000);

  it('a runner that ignores SIGTERM ends a stop in needs_attention, with the reason', async () => {
    const { manager, dirs } = await fakeExoManager({ FAKE_EXO_STUBBORN_CHILD: '1', FAKE_EXO_RUNNERS: '2' });
    await manager.start();
    await eventually(() => runnersUp(dirs.home) === 2, 20_000, 'both runners up (their signal handlers set)');
    const state = await manager.stop();
    expect(state).toMatchObject({ status: 'needs_attention', failure: 'runners_left', ownsProcess: false });
    expect(state.reason).toMatch(/^exo stopped \(SIGINT\) and the GPU may be wedged: exo left runner pid \d+ ignored SIGTERM and had to be killed \(SIGKILL\)/);
    expect(processesWithHome(dirs.home)).toEqual([]);
  });

  it("after a crash that leaves a stubborn runner, exobar does not restart exo (the runner found through exo's process group)", async () => {
    // No recording after the one at spawn (before any runner exists): only the group sweep can find the runner.
    const { manager, dirs, states } = await fakeExoManager(
      { FAKE_EXO_STUBBORN_CHILD: '1', FAKE_EXO_EXIT_AFTER_MS: '600' },
      { crashPolicy: { baseDelayMs: 200 }, timing: { ...FAST_TIMING, childScanIntervalMs: 60_000 } },
    );
    await manager.start();
    await eventually(() => manager.state().status === 'needs_attention', 20_000, 'needs_attention');
    expect(manager.state().reason).toMatch(
      /^exo exited on its own \(exit code 1\) and the GPU may be wedged: .*ignored SIGTERM.*exobar will not restart exo on its own\.$/,
    );
    await sleep(800);
    expect(manager.state()).toMatchObject({ status: 'needs_attention', restarts: { count: 0, nextAt: null } });
    expect(new Set(states.flatMap((s) => (s.pid === null ? [] : [s.pid]))).size).toBe(1);
    expect(processesWithHome(dirs.home)).toEqual([]);
  });
});
