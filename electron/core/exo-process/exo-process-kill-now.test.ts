/**
 * The last resort when exobar must exit at once: SIGKILL to the group of the exo it
 * spawned, runners included; never a signal when it owns no exo.
 */
import { describe, expect, it } from 'vitest';
import { fakeExoManager } from '../../../test/support/fake-exo-exe/manager-fixture';
import { processAlive } from '../../../test/support/process-alive';
import { eventually } from '../../../test/support/eventually';

describe('ExoProcessManager.killNow', () => {
  it('kills the exo exobar started and its runners at once, even one that ignores SIGINT', async () => {
    const { manager, tree } = await fakeExoManager({ FAKE_EXO_IGNORE_SIGINT: '1', FAKE_EXO_RUNNERS: '2' });
    expect(manager.killNow()).toBe(false);
    expect((await manager.start()).status).toBe('running');
    await eventually(async () => (await tree()).length >= 3, 20_000, 'exo and its two runners');
    const pids = await tree();
    expect(manager.killNow()).toBe(true);
    await eventually(() => pids.every((pid) => !processAlive(pid)), 5_000, 'every process of the tree gone');
    // Killed on purpose: not a crash to restart.
    await eventually(() => !manager.ownsProcess, 20_000, 'the exit seen');
    expect(manager.state().restarts.nextAt).toBeNull();
    expect(manager.killNow()).toBe(false);
  });
});
