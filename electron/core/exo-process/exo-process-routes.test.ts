/**
 * The exo process control API through real HTTP: the real core, its API server and
 * the fake exo command as a real child process (with its runners), with a private
 * HOME, data directory and exo port per test.
 */
import { describe, expect, it } from 'vitest';
import { ExoProcessStateSchema } from '../../../shared/exo-process';
import { exoCoreRig as exoRig, forgetRig } from '../../../test/support/fake-exo-exe/core-fixture';
import { EXO_START_MS, processesWithHome } from '../../../test/support/fake-exo-exe/harness';
import { processAlive } from '../../../test/support/process-alive';
import { eventually } from '../../../test/support/eventually';

describe('/api/exo/process', () => {
  it('start, status, restart refused without consent, restart with consent, stop leaves no process', async () => {
    const { rig, tree, state, snapshot } = await exoRig();
    expect(await state()).toMatchObject({ status: 'idle', ownsProcess: false, pid: null });
    expect((await snapshot()).exoProcess).toBeNull();

    // Without ?wait the answer comes at once; the progress follows in the state.
    const started = await rig.control('POST', '/api/exo/process/start');
    expect(started.status).toBe(202);
    expect(ExoProcessStateSchema.parse(started.body).status).toBe('starting');
    await eventually(async () => (await state()).status === 'running', EXO_START_MS, 'exo running');
    const running = await state();
    expect(running).toMatchObject({ ownsProcess: true, fastSynch: { enabled: false, observed: false, mismatch: false } });
    await eventually(async () => (await tree()).length >= 2, 20_000, 'exo and its runner');
    const first = await tree();
    const shown = await snapshot();
    expect(shown.exoProcess).toMatchObject({ status: 'running', pid: running.pid, nodeId: running.nodeId });

    const refused = await rig.control('POST', '/api/exo/process/restart', {});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'exo_restart_required', type: 'conflict_error' });
    expect(refused.body.error.message).toMatch(/A restart deletes every instance that spans this Mac/);
    expect(refused.body.error.message).toMatch(/"consent": true/);
    expect((await state()).pid).toBe(running.pid);
    for (const pid of first) expect(processAlive(pid), `pid ${pid} after a refused restart`).toBe(true);

    const restarted = await rig.control('POST', '/api/exo/process/restart?wait=done', { consent: true });
    expect(restarted.status).toBe(200);
    const after = ExoProcessStateSchema.parse(restarted.body);
    expect(after.status).toBe('running');
    expect(after.pid).not.toBe(running.pid);
    expect(after.nodeId).not.toBe(running.nodeId);
    for (const pid of first) expect(processAlive(pid), `pid ${pid} of the exo before the restart`).toBe(false);
    await eventually(async () => (await tree()).length >= 2, 20_000, 'the new exo and its runner');
    const second = await tree();

    const stopped = await rig.control('POST', '/api/exo/process/stop?wait=done');
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: 'stopped', ownsProcess: false, pid: null });
    expect(stopped.body.reason).toMatch(/SIGINT, graceful/);
    for (const pid of second) expect(processAlive(pid), `pid ${pid} after the stop`).toBe(false);
    expect((await snapshot()).exoProcess?.status).toBe('stopped');
  });

  it('refuses bad bodies and queries with a counted 400, and a risky override with 409, and keeps serving', async () => {
    const { rig, state, snapshot } = await exoRig();
    const before = (await snapshot()).rejectedInputs.http ?? 0;
    const bad = await rig.control('POST', '/api/exo/process/restart', { consent: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', param: 'consent' });
    const unknown = await rig.control('POST', '/api/exo/process/start', { fastSynch: 'auto', force: true });
    expect(unknown.status).toBe(400);
    const query = await rig.control('POST', '/api/exo/process/stop?wait=forever');
    expect(query.status).toBe(400);
    expect(query.body.error.code).toBe('invalid_query');
    const noToken = await rig.control('GET', '/api/exo/process', undefined, { Authorization: '' });
    expect(noToken.status).toBe(401);
    expect((await snapshot()).rejectedInputs.http).toBe(before + 4);
    expect((await state()).status).toBe('idle');
  });

  it('with exo.start in settings the core starts exo, shows a mismatch warning when exo logs the other value, and its stop leaves no process', async () => {
    // The fake logs "FAST_SYNCH forced ON" whatever exobar asked: a wrapper overriding the value.
    const { rig, tree, snapshot, dirs } = await exoRig({ start: true, env: { FAKE_EXO_LOG_FAST_SYNCH: 'on' } });
    await eventually(async () => (await snapshot()).exoProcess?.status === 'running', EXO_START_MS, 'exo started by the core');
    await eventually(async () => (await snapshot()).warnings.some((w) => w.code === 'exo_fast_synch_mismatch'), 20_000, 'the mismatch warning');
    const shown = await snapshot();
    expect(shown.exoProcess?.fastSynch).toMatchObject({ enabled: false, observed: true, mismatch: true });
    expect(shown.warnings.find((w) => w.code === 'exo_fast_synch_mismatch')?.title).toBe(
      'exo runs with fast synch on, but exobar started it with fast synch off',
    );
    await eventually(async () => (await tree()).length >= 2, 20_000, 'exo and its runner');
    const pids = await tree();
    forgetRig(rig);
    // Quitting exobar stops the exo it started.
    await rig.close();
    for (const pid of pids) expect(processAlive(pid), `pid ${pid} after the core stopped`).toBe(false);
    if (process.platform === 'linux') expect(processesWithHome(dirs.home)).toEqual([]);
    dirs.remove();
  });
});
