import { describe, expect, it } from 'vitest';
import { readReal } from '../../../../test/support/fake-exo';
import { parseInstances, parseRunners, parseTasks } from '../attach/parse-exo-state';
import { ExoGhostTracker } from './exo-ghost-tracker';

const INSTANCE = 'dc22b9fe-6adb-47e3-b85c-d056e3bedffb';

function sections(name: string) {
  const state = readReal(name);
  return { instances: parseInstances(state.instances).entries!, runners: parseRunners(state.runners).entries!, tasks: parseTasks(state.tasks).entries! };
}

describe('a cancelled request exo keeps generating, in the real captures', () => {
  it('is seen in the state 0.52 s after a cancel (RunnerRunning, no task), once it has held for the confirm time', () => {
    const ghost = sections('state-after-cancel-ghost.json');
    const instanceId = INSTANCE;
    expect([...ghost.instances.keys()]).toEqual([INSTANCE]);
    const tracker = new ExoGhostTracker(1_000);
    tracker.observe(10_000, ghost.instances, ghost.runners, ghost.tasks);
    // One poll is not enough: a request that just finished looks the same for a moment.
    expect(tracker.ghostOf(instanceId)).toBeNull();
    tracker.observe(11_000, ghost.instances, ghost.runners, ghost.tasks);
    expect(tracker.ghostOf(instanceId)).toMatchObject({ since: 10_000, nodeIds: [expect.stringMatching(/^92c9d3da/)] });
    expect(tracker.modelBusy('exobar/tiny-llama', ghost.instances.values())).toBe(true);
    expect(tracker.modelBusy('exobar/other', ghost.instances.values())).toBe(false);
    // The runner ready again (the real state-ready.json): gone.
    const ready = sections('state-ready.json');
    tracker.observe(12_000, ready.instances, ready.runners, ready.tasks);
    expect(tracker.ghostOf(instanceId)).toBeNull();
    expect(tracker.modelBusy('exobar/tiny-llama', ready.instances.values())).toBe(false);
  });

  it('is not seen while a loading runner or a deleted instance shows', () => {
    for (const name of ['state-loading.json', 'state-ready.json', 'state-after-delete.json']) {
      const s = sections(name);
      const tracker = new ExoGhostTracker(0);
      tracker.observe(1, s.instances, s.runners, s.tasks);
      tracker.observe(2_000, s.instances, s.runners, s.tasks);
      for (const id of s.instances.keys()) expect(tracker.ghostOf(id)).toBeNull();
    }
  });

  it('is still seen while exo keeps older cancelled tasks of the instance listed as Cancelled, or any other final status', () => {
    const ghost = sections('state-after-cancel-ghost.json');
    // Real exo sometimes leaves a cancelled task in /state/tasks for minutes: a final
    // status never makes the instance's runner look busy with a live request.
    for (const status of ['Cancelled', 'Complete', 'Failed', 'TimedOut']) {
      const tasks = new Map(ghost.tasks);
      tasks.set(`stale-${status}`, {
        taskId: `stale-${status}`,
        kind: 'TextGeneration',
        known: true,
        status,
        instanceId: INSTANCE,
        commandId: `cmpl-stale-${status}`,
        cancelledTaskId: null,
        runnerId: null,
      });
      const tracker = new ExoGhostTracker(1_000);
      tracker.observe(10_000, ghost.instances, ghost.runners, tasks);
      tracker.observe(11_000, ghost.instances, ghost.runners, tasks);
      expect(tracker.ghostOf(INSTANCE), status).toMatchObject({ since: 10_000 });
    }
    // A live task (Pending or Running) is the runner's real work: no ghost.
    for (const status of ['Pending', 'Running']) {
      const tasks = new Map(ghost.tasks);
      tasks.set('live', { taskId: 'live', kind: 'TextGeneration', known: true, status, instanceId: INSTANCE, commandId: 'cmpl-live', cancelledTaskId: null, runnerId: null });
      const tracker = new ExoGhostTracker(0);
      tracker.observe(1, ghost.instances, ghost.runners, tasks);
      tracker.observe(2_000, ghost.instances, ghost.runners, tasks);
      expect(tracker.ghostOf(INSTANCE), status).toBeNull();
    }
  });
});
