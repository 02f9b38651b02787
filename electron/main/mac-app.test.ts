/**
 * The app as a Mac user meets it, against a fake Electron that behaves like the real
 * one where it matters: Cmd+W, a relaunch from Finder, another menu-bar item clicked,
 * notifications refused, the tray menu open while snapshots stream, the login item
 * changed in System Settings, the save dialog, a tray image that is not there.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dialog, fake, Menu, Notification } from '../../test/support/electron/fake-electron';
import { fakeStartCore } from '../../test/support/electron/fake-core';
import { flush, menuItem, recordingServices, silent, startApp } from '../../test/support/electron/app-harness';
import { instance, request } from '../../test/support/electron/snapshot-fixtures';
import { defaultSettings } from '../../shared/api';
import { ALERTS_CHANNEL, IpcChannel } from '../../shared/ipc-channels';
import type { AppAlert } from '../../shared/bridge';
import { startExobarApp } from './exobar-app';
import { MENU_LABELS } from './tray-menu';

let userData: string;

beforeEach(() => {
  fake.reset();
  userData = mkdtempSync(join(tmpdir(), 'exobar-mac-'));
  fake.app.paths.userData = userData;
  fake.app.paths.downloads = userData;
});
afterEach(() => rmSync(userData, { recursive: true, force: true }));

const popover = () => fake.windows[0]!;
const tray = () => fake.trays[0]!;
const openFromMenu = () => {
  tray().clickIcon();
  tray().choose(MENU_LABELS.open);
};
const alertsSent = (): AppAlert[] =>
  (popover()
    .webContents.sent.filter((m) => m.channel === ALERTS_CHANNEL)
    .at(-1)?.args[0] as AppAlert[] | undefined) ?? [];

describe('Cmd+W and the application menu', () => {
  it('Cmd+W hides the popover instead of destroying it, and "Open exobar" opens it again', async () => {
    await startApp();
    openFromMenu();
    expect(popover().isVisible()).toBe(true);
    popover().close();
    expect(popover().isDestroyed()).toBe(false);
    expect(popover().isVisible()).toBe(false);
    openFromMenu();
    expect(popover().isVisible()).toBe(true);
  });

  it('while quitting the popover closes for real', async () => {
    const { core } = await startApp();
    core.holdStop();
    fake.app.quit();
    popover().close();
    expect(popover().isDestroyed()).toBe(true);
  });

  it('sets a minimal application menu: the Edit items for the page, and Quit; no Close Window', async () => {
    await startApp();
    const menu = Menu.applicationMenu;
    expect(menu).not.toBeNull();
    const roles = (items: Array<Record<string, unknown>>): string[] =>
      items.flatMap((item) => [
        ...(typeof item.role === 'string' ? [item.role] : []),
        ...(Array.isArray(item.submenu) ? roles(item.submenu as Array<Record<string, unknown>>) : []),
      ]);
    const all = roles(menu!.items);
    expect(all).toEqual(expect.arrayContaining(['undo', 'redo', 'cut', 'copy', 'paste', 'selectAll', 'quit']));
    expect(all.filter((r) => /close|window|file/i.test(r))).toEqual([]);
  });
});

describe('getting to the popover', () => {
  it('opening exobar again from Finder, Spotlight or Launchpad (activate) shows the popover', async () => {
    await startApp();
    fake.app.relaunchFromFinder();
    expect(popover().isVisible()).toBe(true);
  });

  it('showing the popover makes the app active, so that keys reach it and deactivation can be seen', async () => {
    await startApp();
    openFromMenu();
    expect(fake.app.focus).toHaveBeenCalledWith({ steal: true });
    expect(fake.app.active).toBe(true);
  });

  it('hides when another menu-bar item is clicked (the app resigns active; no blur arrives)', async () => {
    await startApp();
    openFromMenu();
    fake.app.clickOtherMenuBarItem();
    expect(popover().isVisible()).toBe(false);
  });

  it('hides on a click on its own tray icon (the menu opens instead)', async () => {
    await startApp();
    openFromMenu();
    tray().clickIcon();
    expect(popover().isVisible()).toBe(false);
    expect(tray().openMenu).not.toBeNull();
  });

  it('stays up while the save dialog has the focus, even if the app resigns meanwhile', async () => {
    await startApp();
    openFromMenu();
    let close!: (v: { canceled: boolean; filePath: string }) => void;
    dialog.showSaveDialog.mockReturnValueOnce(new Promise((r) => (close = r)));
    const pending = fake.ipcMain.invoke(IpcChannel.exportDiagnostics, popover().webContents);
    await flush();
    fake.app.clickOtherMenuBarItem();
    expect(popover().isVisible()).toBe(true);
    close({ canceled: true, filePath: '' });
    await pending;
  });
});

describe('the save dialog', () => {
  it('from the popover: a sheet on the popover', async () => {
    await startApp();
    openFromMenu();
    await fake.ipcMain.invoke(IpcChannel.exportDiagnostics, popover().webContents);
    expect(dialog.showSaveDialog.mock.calls[0]![0]).toBe(popover());
  });

  it('from the tray menu, popover hidden: the app is brought to the front first', async () => {
    await startApp();
    fake.app.active = false;
    tray().clickIcon();
    tray().choose(MENU_LABELS.exportDiagnostics);
    await vi.waitFor(() => expect(dialog.showSaveDialog).toHaveBeenCalled());
    expect(fake.app.active).toBe(true);
    expect(fake.app.focus.mock.invocationCallOrder[0]!).toBeLessThan(dialog.showSaveDialog.mock.invocationCallOrder[0]!);
  });
});

describe('alerts are never lost', () => {
  it('a runner failure whose notification macOS refuses becomes a banner in the popover and a badge on the tray title', async () => {
    Notification.failWith = 'Notifications are not allowed for this application';
    const { core } = await startApp();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A' })] });
    const titleBefore = tray().title;
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'Metal out of memory' } })] });
    expect(Notification.shown.map((n) => n.options.title)).toEqual(['A failed']);
    await vi.waitFor(() => expect(alertsSent().map((a) => a.title)).toEqual(['A failed']));
    expect(alertsSent()[0]!.body).toMatch(/Metal out of memory/);
    expect(tray().title).not.toBe(titleBefore);
    expect(tray().title).toMatch(/⚠ 1$/);
    // Seen once the popover is open: the badge goes, the banner stays until dismissed in the page.
    openFromMenu();
    expect(tray().title).not.toMatch(/⚠/);
    expect(alertsSent().map((a) => a.title)).toEqual(['A failed']);
  });

  it('a port in use, with notifications refused, is in the banner the page gets when it loads', async () => {
    Notification.failWith = 'Notifications are not allowed for this application';
    const cores = fakeStartCore();
    cores.failWith(Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:52416'), { code: 'EADDRINUSE' }));
    await startExobarApp({
      mainDir: '/app/out/main',
      startCore: cores.startCore,
      createServices: () => recordingServices(),
      logger: silent,
      handleSignals: false,
    });
    await vi.waitFor(() => expect(alertsSent().map((a) => a.title)).toEqual(['Port 52416 is in use']));
    expect(tray().title).toMatch(/⚠ 1$/);
  });

  it('where notifications are not supported at all, the alert goes to the banner at once', async () => {
    Notification.supported = false;
    const { core } = await startApp();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'boom' } })] });
    await vi.waitFor(() => expect(alertsSent().map((a) => a.title)).toEqual(['A failed']));
  });

  it('an alert that arrives while the popover is open gets a banner but no badge', async () => {
    Notification.failWith = 'Notifications are not allowed for this application';
    const { core } = await startApp();
    openFromMenu();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'boom' } })] });
    await vi.waitFor(() => expect(alertsSent().map((a) => a.title)).toEqual(['A failed']));
    expect(tray().title).not.toMatch(/⚠/);
  });

  it('a delivered notification makes no banner', async () => {
    const { core } = await startApp();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerFailed', errorMessage: 'boom' } })] });
    await flush();
    expect(Notification.shown).toHaveLength(1);
    expect(alertsSent()).toEqual([]);
    expect(tray().title).not.toMatch(/⚠/);
  });
});

describe('the tray menu while it is open', () => {
  it('is never swapped while open: the change waits for it to close', async () => {
    const { core } = await startApp();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A' })] });
    tray().clickIcon();
    const open = tray().openMenu!;
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A' }), instance('b', { modelName: 'B' })] });
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A' }), instance('b', { modelName: 'B', status: { kind: 'RunnerRunning' } })] });
    expect(tray().swapsWhileOpen).toBe(0);
    expect(tray().openMenu).toBe(open);
    tray().closeMenu();
    await flush();
    expect(tray().menu!.items.some((i) => String(i.label).startsWith('B'))).toBe(true);
  });

  it('keeps fast-changing numbers (queue, requests in flight) out of the labels, so streaming rebuilds nothing', async () => {
    const { core } = await startApp();
    core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerRunning' } })] });
    const builds = tray().setContextMenu.mock.calls.length;
    for (let n = 1; n <= 5; n++) {
      const requests = Array.from({ length: n }, (_, i) => request(`r${i}`, i === 0 ? 'decoding' : 'queued'));
      core.fakeNode.publish({ instances: [instance('a', { modelName: 'A', status: { kind: 'RunnerRunning' }, queue: { capacity: 64, requests } })] });
    }
    expect(tray().setContextMenu.mock.calls.length).toBe(builds);
    expect(menuItem('A').label).toBe('A — Running');
  });
});

describe('start at login', () => {
  it('shows what macOS has, not settings.json, and start-up writes nothing', async () => {
    fake.app.isPackaged = true;
    writeFileSync(join(userData, 'settings.json'), JSON.stringify({ ...defaultSettings(), startAtLogin: false }));
    fake.app.toggleLoginItemInSystemSettings(true);
    await startApp();
    expect(fake.app.setLoginItemSettings).not.toHaveBeenCalled();
    expect(menuItem(MENU_LABELS.startAtLogin).checked).toBe(true);
  });

  it('follows a change made in System Settings the next time the menu opens', async () => {
    fake.app.isPackaged = true;
    await startApp();
    expect(menuItem(MENU_LABELS.startAtLogin).checked).toBe(false);
    fake.app.toggleLoginItemInSystemSettings(true);
    tray().clickIcon();
    expect(tray().openMenu!.getMenuItemById('start-at-login')!.checked).toBe(true);
    expect(fake.app.setLoginItemSettings).not.toHaveBeenCalled();
  });

  it('asks macOS when the menu opens, not on every snapshot', async () => {
    fake.app.isPackaged = true;
    const { core } = await startApp();
    const reads = fake.app.getLoginItemSettings.mock.calls.length;
    for (let seq = 0; seq < 5; seq++) core.fakeNode.publish({ instances: [instance('a')] });
    expect(fake.app.getLoginItemSettings.mock.calls.length).toBe(reads);
    tray().clickIcon();
    expect(fake.app.getLoginItemSettings.mock.calls.length).toBe(reads + 1);
  });

  it('writes once when the user changes it', async () => {
    fake.app.isPackaged = true;
    await startApp();
    tray().clickIcon();
    tray().choose(MENU_LABELS.startAtLogin, true);
    await vi.waitFor(() => expect(fake.app.setLoginItemSettings).toHaveBeenCalledWith({ openAtLogin: true }));
    expect(fake.app.setLoginItemSettings).toHaveBeenCalledTimes(1);
    expect(fake.app.loginItem.openAtLogin).toBe(true);
    await vi.waitFor(() => expect(JSON.parse(readFileSync(join(userData, 'settings.json'), 'utf8')).startAtLogin).toBe(true));
    await vi.waitFor(() => expect(menuItem(MENU_LABELS.startAtLogin).checked).toBe(true));
  });

  it('a registration macOS holds for approval is said, and the checkbox shows it is not on', async () => {
    fake.app.isPackaged = true;
    fake.app.loginItemProblem = 'requires-approval';
    await startApp();
    tray().clickIcon();
    tray().choose(MENU_LABELS.startAtLogin, true);
    await vi.waitFor(() => expect(Notification.shown.map((n) => n.options.body).join('\n')).toMatch(/System Settings.*Login Items/));
    expect(menuItem(MENU_LABELS.startAtLogin).checked).toBe(false);
  });
});

describe('tray images', () => {
  it('a tray image that is not there leaves a visible title to click, not an invisible icon', async () => {
    fake.app.appPath = '/nowhere';
    await startApp();
    expect((tray().image as { isEmpty(): boolean }).isEmpty()).toBe(true);
    expect(tray().title).toBe('exobar');
  });
});
