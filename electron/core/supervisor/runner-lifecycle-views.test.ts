/**
 * What every view says about a runner while it dies or stops: never "serving" once its
 * requests have failed or its Shutdown is out. A real supervisor over the fake runner;
 * after each event the rig derives the lifecycle word as the tray, header and API do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { instanceLifecycle } from '../../../shared/instance-state';
import { instanceFixture } from '../../../test/support/instance-fixture';
import { disposeRigs, supervisorRig } from '../../../test/support/supervisor-rig';

afterEach(async () => {
  expect(await disposeRigs()).toBe(0);
});

describe('the views during a runner death or stop', () => {
  it('a watchdog kill: once the requests failed and RunnerFailed is out, no view says serving while the kill runs', async () => {
    const r = supervisorRig('hang-on-generate', { slowKillMs: 600 });
    r.supervisor.start();
    await r.waitState('ready');
    r.generate();
    await r.waitEvent((e) => e.type === 'task_lost');
    await r.waitEvent((e) => e.type === 'down');
    const from = r.observations.findIndex((o) => o.event === 'watchdog');
    const until = r.observations.findIndex((o) => o.event === 'down');
    const during = r.observations.slice(from + 1, until + 1);
    expect(during.map((o) => o.event)).toEqual(expect.arrayContaining(['task_lost', 'runner_status:RunnerFailed', 'down']));
    for (const o of during) expect(o, o.event).toMatchObject({ lifecycle: expect.not.stringMatching(/^serving$/) });
  });

  it('a stop: from the Shutdown on the views say stopping, not serving until the process has exited', async () => {
    const r = supervisorRig('ok');
    r.supervisor.start();
    await r.waitState('ready');
    const stopping = r.supervisor.stop();
    const first = r.observations.findIndex((o) => o.event === 'runner_status:RunnerShuttingDown');
    expect(first).toBeGreaterThanOrEqual(0);
    expect(r.observations.slice(first).map((o) => o.lifecycle)).toEqual(r.observations.slice(first).map(() => 'stopping'));
    await stopping;
    expect(r.observations.at(-1)).toMatchObject({ state: 'stopped', lifecycle: 'stopping' });
  });
});

describe('the lifecycle words of a ready runner that reports a shutdown', () => {
  const ready = (kind: 'RunnerShuttingDown' | 'RunnerShutdown') =>
    instanceFixture({ runner: { ...instanceFixture().runner, state: 'ready', status: { kind } } });

  it('RunnerShuttingDown or RunnerShutdown beside a ready runner is stopping, not serving', () => {
    expect(instanceLifecycle(ready('RunnerShuttingDown'))).toBe('stopping');
    expect(instanceLifecycle(ready('RunnerShutdown'))).toBe('stopping');
  });
});
