/**
 * Starting and stopping exo for real: the fake exo command runs as a child process,
 * with its pidfile, log lines, API and runner children.
 */
import { createServer, type Server } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ExoFastSynchPlan, ExoPlannedInstance } from '../../../shared/exo-fast-synch';
import { processAlive } from '../../../test/support/process-alive';
import { FAKE_EXO_COMMAND, killAll, fakeExoHome, receivedEnv } from '../../../test/support/fake-exo-exe/harness';
import { fakeExoManager } from '../../../test/support/fake-exo-exe/manager-fixture';
import { eventually } from '../../../test/support/eventually';

const ring = (id: string): ExoPlannedInstance => ({ id, model: `model-${id}`, instanceType: 'ring', nodeCount: 1 });
const jaccl = (id: string): ExoPlannedInstance => ({ id, model: `model-${id}`, instanceType: 'jaccl', nodeCount: 2 });
const plan = (instances: ExoPlannedInstance[]): ExoFastSynchPlan => ({ instances, override: 'auto', acknowledgeRisk: false });

describe('ExoProcessManager: start, fast synch, stop', () => {
  const cases: Array<{ name: string; plan: ExoFastSynchPlan; value: 'true' | 'false'; flag: string }> = [
    { name: 'ring only', plan: plan([ring('a'), ring('b')]), value: 'false', flag: '--no-fast-synch' },
    { name: 'JACCL only', plan: plan([jaccl('a')]), value: 'true', flag: '--fast-synch' },
    { name: 'mixed', plan: plan([ring('a'), jaccl('b')]), value: 'false', flag: '--no-fast-synch' },
  ];
  for (const c of cases) {
    it(`${c.name}: exo and its runners really receive EXO_FAST_SYNCH=${c.value}; a stop leaves no process of its tree`, async () => {
      const { manager, dirs, tree } = await fakeExoManager({ FAKE_EXO_RUNNERS: '2' });
      const state = await manager.start(c.plan);
      expect(state.status).toBe('running');
      expect(state.ownsProcess).toBe(true);
      expect(state.command).toContain(c.flag);
      expect(state.fastSynch).toMatchObject({ enabled: c.value === 'true', observed: c.value === 'true', mismatch: false });

      const exoPid = state.pid!;
      expect(receivedEnv(exoPid, dirs.home).EXO_FAST_SYNCH).toBe(c.value);
      // Two runners, and possibly tsx's esbuild service (the fake is TypeScript): every child inherits the value.
      await eventually(async () => (await tree()).length >= 3, 20_000, 'exo and its two runners');
      const pids = await tree();
      for (const child of pids.slice(1)) expect(receivedEnv(child, dirs.home).EXO_FAST_SYNCH).toBe(c.value);
      // What exo's runner bootstrap made of it, in exo's own log.
      await eventually(
        () => (readFileSync(join(fakeExoHome(dirs.home), 'exo_log', 'exo.log'), 'utf8').match(/Fast synch flag: \d/g) ?? []).length === 2,
        20_000,
        'runner log lines',
      );
      const flags = readFileSync(join(fakeExoHome(dirs.home), 'exo_log', 'exo.log'), 'utf8').match(/Fast synch flag: (\d)/g);
      expect(new Set(flags)).toEqual(new Set([`Fast synch flag: ${c.value === 'true' ? 1 : 0}`]));

      const stopped = await manager.stop();
      expect(stopped.status).toBe('stopped');
      expect(stopped.reason).toMatch(/SIGINT, graceful/);
      expect(stopped.ownsProcess).toBe(false);
      for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false);
    });
  }

  it('is ready when the API answers, not at the banner (printed before the bind)', async () => {
    const { manager, states } = await fakeExoManager({ FAKE_EXO_BIND_DELAY_MS: '1500' });
    const state = await manager.start();
    expect(state.status).toBe('running');
    const bannerSeen = states.find((s) => s.lastLines.some((l) => l.includes('Dashboard & API Ready')));
    expect(bannerSeen?.status).toBe('starting');
    expect(state.readyAt! - state.startedAt!).toBeGreaterThanOrEqual(1500);
    expect(states.some((s) => s.status === 'starting' && /waiting for exo's API/.test(s.progress ?? ''))).toBe(true);
    expect(state.nodeId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a stop while exo is starting calls the start off and stops exo', async () => {
    const { manager, states } = await fakeExoManager({ FAKE_EXO_BIND_DELAY_MS: '3000' });
    const started = manager.start();
    await eventually(() => states.some((s) => s.pid !== null), 20_000, 'exo spawned');
    const pid = manager.state().pid!;
    const stopped = await manager.stop();
    await started;
    expect(stopped).toMatchObject({ status: 'stopped', readyAt: null, ownsProcess: false });
    expect(processAlive(pid)).toBe(false);
  });

  it('says when the command is not found', async () => {
    const { manager } = await fakeExoManager();
    const fixture = manager as unknown as { options: { settings: { command: string } } };
    fixture.options.settings.command = '/nonexistent/bin/exo';
    const state = await manager.start();
    expect(state).toMatchObject({ status: 'crashed', failure: 'command_not_found', pid: null, ownsProcess: false });
    expect(state.reason).toMatch(/"\/nonexistent\/bin\/exo" was not found/);
  });

  it('says the port is taken, before starting exo', async () => {
    const { manager, port } = await fakeExoManager();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const state = await manager.start();
      expect(state).toMatchObject({ status: 'crashed', failure: 'port_taken', pid: null, startedAt: null });
      expect(state.reason).toContain(`Port ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('reads "address already in use" from exo when the port is taken after the check', async () => {
    const { manager, port, states } = await fakeExoManager({ FAKE_EXO_BIND_DELAY_MS: '2000' });
    const blocker: Server = createServer();
    const started = manager.start();
    await eventually(() => states.some((s) => s.pid !== null), 20_000, 'exo spawned');
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const state = await started;
      expect(state).toMatchObject({ status: 'crashed', failure: 'port_taken', exit: { code: 1 } });
      expect(state.lastLines.some((l) => /address already in use/.test(l))).toBe(true);
    } finally {
      blocker.close();
    }
  });

  it('says another exo holds the pidfile, and never stops that exo', async () => {
    const { manager, dirs, port } = await fakeExoManager();
    const other = spawn(FAKE_EXO_COMMAND, ['--api-port', String(port + 1 > 65535 ? port - 1 : port + 1)], {
      env: { ...process.env, HOME: dirs.home, FAKE_EXO_RUNNERS: '0' },
      stdio: 'ignore',
    });
    try {
      await eventually(
        () => {
          try {
            return readFileSync(join(fakeExoHome(dirs.home), 'exo.pid'), 'utf8').trim() === String(other.pid);
          } catch {
            return false;
          }
        },
        20_000,
        'the other exo to hold its pidfile',
      );
      const state = await manager.start();
      expect(state).toMatchObject({ status: 'crashed', failure: 'pidfile_held', ownsProcess: false });
      expect(state.reason).toContain(`pid ${other.pid}`);
      await manager.shutdown();
      expect(processAlive(other.pid!)).toBe(true);
    } finally {
      killAll([other.pid!]);
    }
  });

  it('reports an exit during start with its code and last lines', async () => {
    const { manager } = await fakeExoManager({ FAKE_EXO_EXIT_DURING_START: '3' });
    const state = await manager.start();
    expect(state).toMatchObject({ status: 'crashed', failure: 'exited_during_start', exit: { code: 3, signal: null }, restarts: { count: 0, nextAt: null } });
    expect(state.lastLines.some((l) => l.includes('EXO terminated due to unhandled exception'))).toBe(true);
  });

  it('flags a mismatch when exo logs the other fast-synch value', async () => {
    const { manager } = await fakeExoManager({ FAKE_EXO_LOG_FAST_SYNCH: 'on' });
    const state = await manager.start(plan([ring('a')]));
    expect(state.fastSynch).toMatchObject({ enabled: false, observed: true, mismatch: true });
  });

  it('escalates to SIGTERM when exo ignores SIGINT', async () => {
    const { manager, tree } = await fakeExoManager({ FAKE_EXO_IGNORE_SIGINT: '1' }, { timing: { sigintGraceMs: 700, childScanIntervalMs: 200 } });
    await manager.start();
    await eventually(async () => (await tree()).length >= 2, 20_000, 'the runner');
    const pids = await tree();
    const state = await manager.stop();
    expect(state).toMatchObject({ status: 'stopped' });
    expect(state.reason).toMatch(/SIGTERM/);
    for (const pid of pids) expect(processAlive(pid)).toBe(false);
  });
});
