import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clipboard, dialog, fake, FakeWebContents, Notification, protocol, session } from '../../test/support/electron/fake-electron';
import { fakeStartCore } from '../../test/support/electron/fake-core';
import { flush, menuItem, recordingServices, silent, startApp } from '../../test/support/electron/app-harness';
import { instance, request, warning } from '../../test/support/electron/snapshot-fixtures';
import { defaultSettings } from '../../shared/api';
import { IpcChannel } from '../../shared/ipc-channels';
import { startExobarApp } from './exobar-app';
import { MENU_LABELS } from './tray-menu';

let userData: string;

beforeEach(() => {
  fake.reset();
  userData = mkdtempSync(join(tmpdir(), 'exobar-app-'));
  fake.app.paths.userData = userData;
  fake.app.paths.downloads = userData;
  delete process.env.EXOBAR_SIM_RUNNER_JS;
});
afterEach(() => rmSync(userData, { recursive: true, force: true }));

const services = recordingServices;
const start = startApp;

describe('app start-up', () => {
  it('takes the single-instance lock, registers app:// before ready, hides the dock, hardens the session', async () => {
    await start();
    expect(fake.app.requestSingleInstanceLock).toHaveBeenCalled();
    expect(protocol.registerSchemesAsPrivileged).toHaveBeenCalledWith([{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]);
    expect(protocol.registerSchemesAsPrivileged.mock.invocationCallOrder[0]!).toBeLessThan(fake.app.whenReady.mock.invocationCallOrder[0]!);
    expect(protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
    expect(fake.app.dock.hide).toHaveBeenCalled();
    expect(session.defaultSession.webRequest.onHeadersReceived).toHaveBeenCalled();
    expect(session.defaultSession.setPermissionRequestHandler).toHaveBeenCalled();
  });

  it('starts the core on 127.0.0.1 with the port and data directory from settings', async () => {
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ ...defaultSettings(), apiPort: 6001, defaultFastSynch: 'off' }));
    const { cores } = await start({ simTimeScale: 0.5 });
    expect(cores.startCore).toHaveBeenCalledOnce();
    const options = cores.started[0]!.options;
    expect(options).toMatchObject({ host: '127.0.0.1', port: 6001, dataDir: userData, simTimeScale: 0.5, rendererDir: '/app/out/renderer' });
    expect(options.settings).toMatchObject({ apiPort: 6001, defaultFastSynch: 'off' });
    // The core finds the built sim runner through the environment (electron/core/runner-entry.ts).
    expect(process.env.EXOBAR_SIM_RUNNER_JS).toBe('/app/out/main/sim-runner.cjs');
  });

  it('uses the data directory the settings name', async () => {
    const dataDir = join(userData, 'elsewhere');
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ dataDir }));
    const { cores } = await start();
    expect(cores.started[0]!.options.dataDir).toBe(dataDir);
  });

  it('creates a secure popover loading app://exobar and a tray with the idle template image', async () => {
    await start();
    expect(fake.windows).toHaveLength(1);
    const win = fake.windows[0]!;
    expect(win.options).toMatchObject({ frame: false, show: false, skipTaskbar: true, resizable: false });
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      preload: '/app/out/preload/index.cjs',
    });
    expect(win.loadURL).toHaveBeenCalledWith('app://exobar/index.html');
    expect(fake.trays).toHaveLength(1);
    expect((fake.trays[0]!.image as { path: string; template: boolean }).path).toMatch(/tray-idleTemplate\.png$/);
    expect((fake.trays[0]!.image as { template: boolean }).template).toBe(true);
    expect(fake.trays[0]!.menu).not.toBeNull();
  });

  it('a second instance quits at once and starts nothing; the first shows its popover', async () => {
    fake.app.singleInstanceLock = false;
    const cores = fakeStartCore();
    expect(await startExobarApp({ mainDir: '/app/out/main', startCore: cores.startCore, logger: silent, handleSignals: false })).toBeNull();
    expect(fake.app.quit).toHaveBeenCalled();
    expect(cores.startCore).not.toHaveBeenCalled();

    fake.reset();
    fake.app.paths.userData = userData;
    await start();
    fake.app.emit('second-instance');
    expect(fake.windows[0]!.isVisible()).toBe(true);
  });

  it('a port in use: starts on a free port and says so', async () => {
    const cores = fakeStartCore();
    cores.failWith(Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:52416'), { code: 'EADDRINUSE' }));
    await startExobarApp({ mainDir: '/app/out/main', startCore: cores.startCore, createServices: () => services(), logger: silent, handleSignals: false });
    expect(cores.startCore).toHaveBeenCalledTimes(2);
    expect(cores.startCore.mock.calls[1]![0].port).toBe(0);
    expect(Notification.shown.map((n) => n.options.title)).toContain('Port 52416 is in use');
  });

  it('a core that cannot start is reported in a dialog and the app exits', async () => {
    const cores = fakeStartCore();
    cores.failWith(new Error('data directory /x is not a directory'));
    await expect(startExobarApp({ mainDir: '/app/out/main', startCore: cores.startCore, logger: silent, handleSignals: false })).rejects.toThrow(
      /not a directory/,
    );
    expect(dialog.showErrorBox).toHaveBeenCalledWith('exobar could not start', 'data directory /x is not a directory');
    expect(fake.app.exit).toHaveBeenCalledWith(1);
  });
});

describe('settings in the app', () => {
  it('a corrupt settings file is reported, kept aside, and replaced by defaults', async () => {
    writeFileSync(join(userData, 'settings.json'), '{"apiPort": 52416,');
    const { cores } = await start();
    expect(cores.started[0]!.options.settings).toEqual(defaultSettings());
    const shown = Notification.shown.find((n) => n.options.title === 'exobar settings were reset');
    expect(shown?.options.body).toMatch(/not valid JSON.*replaced by defaults/);
    expect(readdirSync(userData).some((f) => f.startsWith('settings.json.corrupt-'))).toBe(true);
    expect(JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8'))).toEqual(defaultSettings());
  });

  it('without notifications the reset is shown in a dialog', async () => {
    Notification.supported = false;
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ apiPort: 'high' }));
    await start();
    expect(dialog.showMessageBox).toHaveBeenCalledWith(expect.objectContaining({ message: 'exobar settings were reset' }));
  });

  it('Start at login: the menu checkbox saves the setting and registers the login item (packaged app)', async () => {
    fake.app.isPackaged = true;
    const { exobar } = await start({ logger: silent });
    expect(fake.app.setLoginItemSettings).not.toHaveBeenCalled();
    menuItem(MENU_LABELS.startAtLogin).click({ checked: true });
    await vi.waitFor(() => expect(fake.app.setLoginItemSettings).toHaveBeenLastCalledWith({ openAtLogin: true }));
    expect(JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8')).startAtLogin).toBe(true);
    expect(exobar.settings.get().startAtLogin).toBe(true);
    expect(menuItem(MENU_LABELS.startAtLogin).checked).toBe(true);
  });

  it('in development the login item is not registered (it would be the bare Electron binary)', async () => {
    await start();
    menuItem(MENU_LABELS.startAtLogin).click({ checked: true });
    await vi.waitFor(() => expect(JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8')).startAtLogin).toBe(true));
    expect(fake.app.setLoginItemSettings).not.toHaveBeenCalled();
  });
});

describe('snapshots, tray and notifications', () => {
  it('pushes each snapshot to the window and shows it in the tray', async () => {
    const { core } = await start();
    const ready = instance('a', {
      modelName: 'Llama 3.2 1B (simulated)',
      ttft: {
        samples: [],
        p50Ms: null,
        p95Ms: null,
        latest: { requestId: 'r', at: 1, totalMs: 380, waitMs: 1, prefillMs: 300, firstTokenMs: 79, promptTokens: 9 },
      },
    });
    const pushed = core.fakeNode.publish({ instances: [ready] });
    const sent = fake.windows[0]!.webContents.sent.filter((m) => m.channel === IpcChannel.snapshot);
    expect(sent.at(-1)!.args[0]).toBe(pushed);
    const tray = fake.trays[0]!;
    expect(tray.title).toBe('1 · 0.38s');
    expect((tray.image as { path: string }).path).toMatch(/tray-servingTemplate\.png$/);
    expect(menuItem('Llama 3.2 1B (simulated)').label).toBe('Llama 3.2 1B (simulated) — Ready');
  });

  it('rebuilds the native menu only when it reads differently', async () => {
    const { core } = await start();
    core.fakeNode.publish({ instances: [instance('a')] });
    const builds = fake.trays[0]!.setContextMenu.mock.calls.length;
    core.fakeNode.publish({ instances: [instance('a')] });
    core.fakeNode.publish({ instances: [instance('a')] });
    expect(fake.trays[0]!.setContextMenu.mock.calls.length).toBe(builds);
  });

  it('notifies a runner failure and a new shared-GPU warning once each', async () => {
    const { core } = await start();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A' })] });
    const failed = instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'Metal out of memory' } });
    core.fakeNode.publish({ instances: [failed] });
    core.fakeNode.publish({ instances: [failed], warnings: [warning('two_ring_fast_synch', ['a', 'b'])] });
    core.fakeNode.publish({ instances: [failed], warnings: [warning('two_ring_fast_synch', ['a', 'b'])] });
    expect(Notification.shown.map((n) => n.options.title)).toEqual(['A failed', 'Warning two_ring_fast_synch']);
    Notification.shown[0]!.emit('click');
    expect(fake.windows[0]!.isVisible()).toBe(true);
  });

  it('the popover opens under the tray icon and hides when it loses focus', async () => {
    await start();
    menuItem(MENU_LABELS.open).click({});
    const win = fake.windows[0]!;
    expect(win.isVisible()).toBe(true);
    // Tray at x=1000 (24 wide): centred under it, just below the menu bar.
    expect(win.setPosition).toHaveBeenCalledWith(1012 - 210, 28, false);
    win.emit('blur');
    expect(win.isVisible()).toBe(false);
  });

  it('Copy API URL puts the local API base URL on the clipboard', async () => {
    await start();
    menuItem(MENU_LABELS.copyApiUrl).click({});
    expect(clipboard.writeText).toHaveBeenCalledWith('http://127.0.0.1:52416/v1');
  });

  it('Stop all models stops every instance, without a question when no request is in flight', async () => {
    const { core } = await start();
    const a = core.fakeNode.addReady('sim/llama-3.2-1b');
    const b = core.fakeNode.addReady('sim/llama-3.2-3b');
    menuItem(MENU_LABELS.stopAll).click({});
    expect(dialog.showMessageBox).not.toHaveBeenCalledWith(expect.objectContaining({ buttons: ['Stop all', 'Cancel'] }));
    await vi.waitFor(() =>
      expect(
        vi
          .mocked(core.fakeNode.deleteInstance)
          .mock.calls.map((c) => c[0])
          .sort(),
      ).toEqual([a, b].sort()),
    );
    expect(core.fakeNode.snapshot().instances).toEqual([]);
  });

  it('Stop all models with requests in flight asks first, in words, and stops nothing when cancelled', async () => {
    const { core } = await start();
    const busy = instance('a', { queue: { capacity: 64, requests: [request('r1', 'decoding'), request('r2', 'queued')] } });
    core.fakeNode.publish({ instances: [busy, instance('b')] });
    dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    menuItem(MENU_LABELS.stopAll).click({});
    await vi.waitFor(() => expect(dialog.showMessageBox).toHaveBeenCalled());
    const question = dialog.showMessageBox.mock.calls.at(-1)!.at(-1) as { message: string; buttons: string[] };
    expect(question.message).toBe('Stop all models? 2 requests will end.');
    expect(question.buttons).toEqual(['Stop all', 'Cancel']);
    await flush();
    expect(core.fakeNode.deleteInstance).not.toHaveBeenCalled();

    dialog.showMessageBox.mockResolvedValueOnce({ response: 0, checkboxChecked: false });
    menuItem(MENU_LABELS.stopAll).click({});
    await vi.waitFor(() =>
      expect(
        vi
          .mocked(core.fakeNode.deleteInstance)
          .mock.calls.map((c) => c[0])
          .sort(),
      ).toEqual(['a', 'b']),
    );
  });

  it('a menu action that fails becomes a notification', async () => {
    const { svc } = await start();
    vi.mocked(svc.launchSafePair).mockRejectedValueOnce(new Error('Not enough free memory for the safe pair'));
    menuItem(MENU_LABELS.launchSafePair).click({});
    await vi.waitFor(() => expect(Notification.shown.map((n) => n.options.body)).toContain('Not enough free memory for the safe pair'));
  });
});

describe('IPC from the popover', () => {
  it('refuses a stop that would end requests in flight unless the page confirmed, as the HTTP API does', async () => {
    const { core } = await start();
    const page = fake.windows[0]!.webContents;
    const busy = instance('a', { queue: { capacity: 64, requests: [request('r1', 'decoding'), request('r2', 'queued')] } });
    core.fakeNode.publish({ instances: [busy, instance('b')] });
    expect(await fake.ipcMain.invoke(IpcChannel.stopInstance, page, 'a')).toMatchObject({
      ok: false,
      // The route's own refusal, word for word: the page gets the same over HTTP.
      error: { code: 'requests_in_flight', message: expect.stringMatching(/^2 requests will end if this model stops/), requests: 2 },
    });
    expect(await fake.ipcMain.invoke(IpcChannel.stopAll, page)).toMatchObject({ ok: false, error: { code: 'requests_in_flight' } });
    expect(core.fakeNode.deleteInstance).not.toHaveBeenCalled();
    // A model without requests, and a confirmed stop, reach the node (whose published instances it cannot find).
    await fake.ipcMain.invoke(IpcChannel.stopInstance, page, 'b');
    await fake.ipcMain.invoke(IpcChannel.stopInstance, page, 'a', { confirm: true });
    expect(vi.mocked(core.fakeNode.deleteInstance).mock.calls.map((c) => c[0])).toEqual(['b', 'a']);
  });

  it('answers its own page and refuses (and counts) anything else', async () => {
    const { core } = await start();
    const page = fake.windows[0]!.webContents;
    expect(await fake.ipcMain.invoke(IpcChannel.getSnapshot, page)).toMatchObject({ ok: true, value: { seq: core.fakeNode.current.seq } });
    const stranger = new FakeWebContents('app://exobar/index.html');
    expect(await fake.ipcMain.invoke(IpcChannel.stopAll, stranger)).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    // An invalid request is the route's refusal (400), counted on the IPC boundary.
    expect(await fake.ipcMain.invoke(IpcChannel.createInstance, page, { model: 42 })).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(core.fakeNode.rejected).toEqual(['ipc', 'ipc']);
  });

  it('exports the diagnostic bundle where the save dialog says', async () => {
    const { svc } = await start();
    const target = join(userData, 'bundle.zip');
    dialog.showSaveDialog.mockResolvedValueOnce({ canceled: false, filePath: target });
    const answer = await fake.ipcMain.invoke(IpcChannel.exportDiagnostics, fake.windows[0]!.webContents);
    expect(answer).toEqual({ ok: true, value: { saved: true, location: target } });
    expect(svc.writeDiagnosticBundle).toHaveBeenCalledWith(target);
    const options = dialog.showSaveDialog.mock.calls[0]![0] as { defaultPath: string };
    expect(options.defaultPath).toMatch(new RegExp(`^${userData}/exobar-diagnostics-\\d{8}-\\d{6}\\.zip$`));
  });

  it('a dismissed save dialog writes nothing', async () => {
    const { svc } = await start();
    const answer = await fake.ipcMain.invoke(IpcChannel.exportDiagnostics, fake.windows[0]!.webContents);
    expect(answer).toEqual({ ok: true, value: { saved: false, location: null } });
    expect(svc.writeDiagnosticBundle).not.toHaveBeenCalled();
  });

  it('the popover stays open while the save dialog has the focus', async () => {
    await start();
    const win = fake.windows[0]!;
    win.show();
    let close!: (v: { canceled: boolean; filePath: string }) => void;
    dialog.showSaveDialog.mockReturnValueOnce(new Promise((r) => (close = r)));
    const pending = fake.ipcMain.invoke(IpcChannel.exportDiagnostics, win.webContents);
    await flush();
    win.emit('blur');
    expect(win.isVisible()).toBe(true);
    close({ canceled: true, filePath: '' });
    await pending;
    win.emit('blur');
    expect(win.isVisible()).toBe(false);
  });
});

describe('quit', () => {
  it('waits for the core to stop every runner, then exits', async () => {
    const { core, exobar } = await start();
    const hold = core.holdStop();
    fake.app.quit();
    expect(core.stopCalls).toBe(1);
    expect(exobar.quitState()).toBe('stopping');
    expect(fake.app.exit).not.toHaveBeenCalled();
    // Quitting again while stopping (Cmd-Q twice) neither stops twice nor exits early.
    fake.app.quit();
    expect(core.stopCalls).toBe(1);
    hold.release();
    await vi.waitFor(() => expect(fake.app.exit).toHaveBeenCalledWith(0));
    expect(exobar.quitState()).toBe('stopped');
  });

  it('the Quit menu entry goes through the same clean stop', async () => {
    const { core } = await start();
    menuItem(MENU_LABELS.quit).click({});
    await vi.waitFor(() => expect(fake.app.exit).toHaveBeenCalledWith(0));
    expect(core.stopCalls).toBe(1);
  });

  it('a stop that hangs past the deadline kills the runner process groups and the exo exobar started, and exits', async () => {
    const { core } = await start({ stopDeadlineMs: 50 });
    core.fakeNode.publish({ instances: [instance('a')] });
    core.fakeNode.pids = [100]; // its runner, alive
    core.holdStop();
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    try {
      fake.app.quit();
      await vi.waitFor(() => expect(fake.app.exit).toHaveBeenCalledWith(1));
      expect(kill).toHaveBeenCalledWith(-100, 'SIGKILL');
      expect(core.exoProcess.killNow).toHaveBeenCalledOnce();
    } finally {
      kill.mockRestore();
    }
  });
});
