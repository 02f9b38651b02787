/**
 * The app's Start, Stop and Restart of this Mac's exo (IPC → core services → the
 * process manager), with the real core and the fake exo command as a child process.
 */
import { describe, expect, it } from 'vitest';
import { exoCoreRig } from '../../test/support/fake-exo-exe/core-fixture';
import { EXO_START_MS } from '../../test/support/fake-exo-exe/harness';
import { processAlive } from '../../test/support/process-alive';
import type { RunningCore } from '../core/start-core';
import { createCoreServices, type CoreServicesOptions } from './core-services';
import { eventually } from '../../test/support/eventually';

/** The app's services over a started core, as the app makes them. */
function servicesOf(core: RunningCore, extra: Partial<CoreServicesOptions> = {}) {
  return createCoreServices({
    node: core.node,
    dataDir: core.dataDir,
    version: 'test',
    settings: () => core.settings,
    mlx: core.mlx,
    showLaunch: core.showLaunch,
    ...extra,
  });
}

describe("core services: this Mac's exo", () => {
  it('returns once the action is under way, refuses a restart without consent with its code, and stops exo', async () => {
    const { rig, tree } = await exoCoreRig();
    const services = servicesOf(rig.core, { exoProcess: rig.core.exoProcess });
    const exo = rig.core.exoProcess;
    await services.controlExoProcess({ action: 'start' });
    // Under way, not done: exo's API cannot answer within one turn of the event loop.
    expect(exo.state().status).toBe('starting');
    // exo's start-up time under load is not what this tests: a generous deadline.
    await eventually(() => exo.state().status === 'running', EXO_START_MS, 'exo running');
    const pid = exo.state().pid!;

    await expect(services.controlExoProcess({ action: 'restart', consent: false })).rejects.toMatchObject({
      code: 'exo_restart_required',
      message: expect.stringMatching(/A restart deletes every instance that spans this Mac/),
    });
    expect(exo.state().pid).toBe(pid);

    const pids = await tree();
    await services.controlExoProcess({ action: 'stop' });
    await eventually(() => exo.state().status === 'stopped', 20_000, 'exo stopped');
    for (const p of pids) expect(processAlive(p), `pid ${p}`).toBe(false);
  });

  it('says so when this exobar does not run exo', async () => {
    const { rig } = await exoCoreRig();
    const services = servicesOf(rig.core);
    await expect(services.controlExoProcess({ action: 'start' })).rejects.toMatchObject({ code: 'exo_process_unavailable' });
  });
});
