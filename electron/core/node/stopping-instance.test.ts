/**
 * Stopping is a state every view shows: an instance stopped with a request in flight
 * stays in `/api/state` as `stopping` (its request ended at once) and its memory counts
 * as used by the fit check, until its runner has exited; then it goes. The runner is held
 * (SIGSTOP) while the views are read, so the window is the runner's, not a guess of time.
 */
import { describe, expect, it } from 'vitest';
import { SIM_MODELS } from '../../../shared/catalog';
import { instanceLifecycle } from '../../../shared/instance-state';
import { SnapshotSchema, type Snapshot } from '../../../shared/snapshot';
import { startCoreRig } from '../../../test/support/api-harness';
import { eventually } from '../../../test/support/eventually';
import { runningModels } from '../fit/fit-gate';

const MODEL = 'sim/llama-3.2-1b';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('an instance being stopped', () => {
  it('reads stopping in /api/state, its memory used, until its runner has exited, then disappears', async () => {
    const rig = await startCoreRig();
    try {
      const id = await rig.launch(MODEL);
      const state = async (): Promise<Snapshot> => SnapshotSchema.parse((await rig.control('GET', '/api/state')).body);
      // A request in flight: a long stream, read until its first token.
      const stream = await fetch(`${rig.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'tell a long story' }], max_tokens: 4000, stream: true }),
      });
      const reader = stream.body!.getReader();
      await reader.read();
      const streamEnded = (async () => {
        while (!(await reader.read()).done);
      })();
      const pid = (await state()).instances.find((i) => i.id === id)!;
      if (pid.source !== 'local' || pid.runner.pid == null) throw new Error('a local runner with a pid');
      const runnerPid = pid.runner.pid;

      // Seen on every snapshot from here: when the instance left the list, its runner was already gone.
      const goneWhileAlive: boolean[] = [];
      const stopWatching = rig.node.onSnapshot((s) => {
        if (!s.instances.some((i) => i.id === id)) goneWhileAlive.push(alive(runnerPid));
      }, 0);

      process.kill(runnerPid, 'SIGSTOP');
      const deleted = rig.control('DELETE', `/api/instances/${id}?confirm=1`);
      try {
        const stopping = await eventually(
          async () => (await state()).instances.find((i) => i.id === id && instanceLifecycle(i) === 'stopping') ?? null,
          10_000,
          'the instance to read stopping',
        );
        expect(stopping.model).toBe(MODEL);
        // Its request ended at once; the instance stays while its runner holds its memory.
        await streamEnded;
        const now = await state();
        expect(now.instances.find((i) => i.id === id)).toBeDefined();
        expect(runningModels(now, SIM_MODELS).map((m) => m.id)).toEqual([MODEL]);
        expect(alive(runnerPid)).toBe(true);
      } finally {
        if (alive(runnerPid)) process.kill(runnerPid, 'SIGCONT');
      }
      expect((await deleted).status).toBeLessThan(300);
      expect((await state()).instances.some((i) => i.id === id)).toBe(false);
      stopWatching();
      expect(goneWhileAlive.length).toBeGreaterThan(0);
      expect(goneWhileAlive.every((stillAlive) => !stillAlive)).toBe(true);
    } finally {
      await rig.close();
    }
  }, 60_000);
});
