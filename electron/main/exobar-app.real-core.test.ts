/**
 * The app glue with the real core (startCore, the node, real sim runner processes)
 * and a fake Electron: a model launched from the popover is served, a GPU sharing check
 * started over IPC is cancelled and leaves the models as they were, and quitting leaves
 * no runner process and no listening API behind.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { fake } from '../../test/support/electron/fake-electron';
import { defaultSettings } from '../../shared/api';
import { IpcChannel } from '../../shared/ipc-channels';
import { mlxPlatform } from '../core/mlx/mlx-platform';
import type { CheckStatus } from '../../shared/sharing-check';
import type { Snapshot } from '../../shared/snapshot';
import { startExobarApp } from './exobar-app';
import { processAlive } from '../../test/support/process-alive';
import { localInstances } from '../../shared/instance-state';

const userData = mkdtempSync(join(tmpdir(), 'exobar-app-real-'));
afterAll(() => rmSync(userData, { recursive: true, force: true }));

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('app with the real core', () => {
  it('serves a model launched over IPC, and quit stops its runner and the API', async () => {
    fake.reset();
    fake.app.paths.userData = userData;
    // Port 0: the test must not collide with a running exobar.
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ ...defaultSettings(), apiPort: 0 }));
    const exobar = await startExobarApp({
      mainDir: join(userData, 'no-build', 'main'),
      logger: pino({ level: 'silent' }),
      handleSignals: false,
      simTimeScale: 0.05,
    });
    expect(exobar).not.toBeNull();
    const { core } = exobar!;
    expect(core.host).toBe('127.0.0.1');
    expect(await accepts(core.port)).toBe(true);
    // The app's local API has the same control endpoints as `exobar serve`.
    const auth = { headers: { Authorization: `Bearer ${core.token}` } };
    expect((await fetch(`${core.url}/api/diagnostics/preview`, auth)).status).toBe(200);
    expect((await fetch(`${core.url}/api/launch/safe-pair`, auth)).status).toBe(200);

    const page = fake.windows[0]!.webContents;
    // The catalog over IPC is the node's: the sim models, labelled simulated.
    const models = (await fake.ipcMain.invoke(IpcChannel.listModels, page)) as {
      ok: boolean;
      value: Array<{ id: string; engine: string; simulated: boolean }>;
    };
    expect(models.value.filter((m) => m.engine === 'sim').map((m) => [m.id, m.simulated])).toEqual([
      ['sim/llama-3.2-1b', true],
      ['sim/llama-3.2-3b', true],
    ]);
    expect(await fake.ipcMain.invoke(IpcChannel.refreshMlxRuntime, page)).toEqual({ ok: true, value: null });
    if (!mlxPlatform(process.platform, process.arch).supported) {
      // Where MLX cannot run, the setup is refused as by POST /api/mlx/setup (409 mlx_unsupported).
      // (Where it can, Metal on a Mac or the CPU on Linux, the setup would really install it: not run here.)
      expect(await fake.ipcMain.invoke(IpcChannel.setupMlxRuntime, page)).toMatchObject({ ok: false, error: { code: 'mlx_unsupported' } });
      expect(core.node.snapshot().mlx).toMatchObject({ supported: false, available: false, setup: null });
    }
    const created = (await fake.ipcMain.invoke(IpcChannel.createInstance, page, { model: 'sim/llama-3.2-1b' })) as { ok: boolean; value: { id: string } };
    expect(created.ok).toBe(true);
    await core.node.waitForReady(created.value.id, 30_000);
    const snapshot = ((await fake.ipcMain.invoke(IpcChannel.getSnapshot, page)) as { value: Snapshot }).value;
    const pid = localInstances(snapshot)[0]!.runner.pid!;
    expect(processAlive(pid)).toBe(true);
    // The tray follows: one model serving.
    await vi.waitFor(() => expect(fake.trays[0]!.title).toBe('1'));

    // "Check GPU sharing" over IPC: started, a second start refused while it runs, listed as
    // running, cancelled once it has launched the 3B beside the 1B; the models are as before.
    const started = (await fake.ipcMain.invoke(IpcChannel.startSharingCheck, page, {
      experiments: ['decode'],
      promptTokens: 12_000,
      decodeTokens: 10_000,
    })) as {
      ok: boolean;
      value: CheckStatus;
    };
    expect(started).toMatchObject({ ok: true, value: { state: 'running' } });
    expect(await fake.ipcMain.invoke(IpcChannel.startSharingCheck, page, {})).toMatchObject({ ok: false, error: { code: 'check_running' } });
    expect(await fake.ipcMain.invoke(IpcChannel.listChecks, page)).toMatchObject({ ok: true, value: { checks: [], running: { id: started.value.id } } });
    await vi.waitFor(
      () =>
        expect(
          localInstances(core.node.snapshot())
            .map((i) => i.model)
            .sort(),
        ).toEqual(['sim/llama-3.2-1b', 'sim/llama-3.2-3b']),
      {
        timeout: 30_000,
      },
    );
    expect(await fake.ipcMain.invoke(IpcChannel.cancelCheck, page, started.value.id)).toEqual({ ok: true, value: null });
    expect(await fake.ipcMain.invoke(IpcChannel.getCheck, page, started.value.id)).toMatchObject({ ok: true, value: { state: 'cancelled' } });
    expect(localInstances(core.node.snapshot()).map((i) => i.id)).toEqual([created.value.id]);

    fake.app.quit();
    await vi.waitFor(() => expect(fake.app.exit).toHaveBeenCalledWith(0), { timeout: 20_000 });
    expect(processAlive(pid)).toBe(false);
    expect(await accepts(core.port)).toBe(false);
  });
});
