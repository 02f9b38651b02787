/**
 * The menu-bar glance from states the process manager really publishes while it runs
 * the fake exo command (the hand-made fixtures of tray-state.test.ts mirror these).
 */
import { describe, expect, it } from 'vitest';
import { fakeExoManager } from '../../test/support/fake-exo-exe/manager-fixture';
import { snapshot } from '../../test/support/electron/snapshot-fixtures';
import { trayViewOf } from './tray-state';

describe("tray: this Mac's exo, from the manager's own states", () => {
  it('starting, running, stopping, stopped', async () => {
    const { manager, states } = await fakeExoManager();
    const running = await manager.start();
    await manager.stop();
    // The core puts no idle state in the snapshot (null instead); the tray shows nothing for one either.
    expect(trayViewOf(snapshot({ exoProcess: states[0] })).title).toBe('');
    const titles = new Set(states.filter((s) => s.status !== 'idle').map((s) => trayViewOf(snapshot({ exoProcess: s })).title));
    expect([...titles]).toEqual(['exo starting', 'exo running', 'exo stopping', '']);
    expect(trayViewOf(snapshot({ exoProcess: running })).tooltip).toContain(`This Mac's exo: running (pid ${running.pid}), fast synch off`);
  });

  it('an exit during start is failed, with the exit code and the reason', async () => {
    const { manager } = await fakeExoManager({ FAKE_EXO_EXIT_DURING_START: '3' });
    const crashed = await manager.start();
    const view = trayViewOf(snapshot({ exoProcess: crashed }));
    expect(view).toMatchObject({ state: 'failed', title: 'exo crashed' });
    expect(view.tooltip).toContain("This Mac's exo: crashed (exit code 3)");
    expect(view.tooltip).toMatch(/exo exited during start \(exit code 3\)/);
  });
});
