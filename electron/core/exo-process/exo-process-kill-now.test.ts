/**
 * The last resort when exobar must exit at once: SIGKILL to the group of the exo it
 * spawned, runners included; never a signal when it owns no exo.
 */
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/support/fake-exo-exe/harness';
import { fakeExoManager } from '../../../test/support/fake-exo-exe/manager-fixture';
import { processAlive } from '../../../test/support/process-alive';

describe('ExoProcessManager.killNow', () => {
  it('kills the exo exobar started and its runners at once, even one that ignores SIGINT', async () => {
    const { manager, tree } = await fakeExoManager({ FAKE_EXO_IGNORE_SIGINT: '1', FAKE_EXO_RUNNERS: '2' });
    expect(manager.killNow()).toBe(false);
    expect((await manager.start()).status).toBe('running');
    await waitUntil(async () => (await tree()).length >= 3, 'exo and its two runners');
    const pids = await tree();
    expect(manager.killNow()).toBe(true);
    await waitUntil(() => pids.every((pid) => !processAlive(pid)), 'every process of the tree gone', 5_000);
    // Killed on purpose: not a crash to restart.
    await waitUntil(() => !manager.ownsProcess, 'the exit seen');
    expect(manager.state().restarts.nextAt).toBeNull();
    expect(manager.killNow()).toBe(false);
  });
});
