/**
 * A fake of the parts of Electron the glue uses: the binary is absent on CI machines,
 * and the glue's behaviour (what it asks of Electron, in which order) is what the tests
 * check. Everything records its calls. It stands in for `electron` in every node-project
 * test through one mock, `mock-electron.setup.ts` (a `setupFiles` entry); a test reaches
 * its state with
 *
 *   import { fake } from './fake-electron';   // state + reset()
 *
 * It follows real Electron (45, macOS) where the glue's defects would hide: a
 * notification can fail (UNUserNotificationCenter refuses unsigned apps, and says so
 * only through a `failed` event); opening the running app from Finder sends `activate`,
 * not `second-instance`; registering a login item can fail or need approval, and the
 * user can change it in System Settings; clicking another menu-bar item sends the app
 * `did-resign-active` but the window no `blur`; `nativeImage.createFromPath` answers
 * an empty image for a file that is not there; `close` (Cmd+W) destroys a window unless
 * a listener prevents it; and an open tray menu is a state that swapping the menu breaks.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { vi } from 'vitest';

type Listener = (...args: never[]) => unknown;

class Emitter extends EventEmitter {
  /** Calls the listeners like Electron would, with an event whose preventDefault is recorded. */
  fire(name: string, ...args: unknown[]): { defaultPrevented: boolean } {
    const event = {
      defaultPrevented: false,
      preventDefault() {
        this.defaultPrevented = true;
      },
    };
    this.emit(name, event, ...args);
    return event;
  }
}

let nextWebContentsId = 1;

export class FakeWebFrame {
  parent: FakeWebFrame | null = null;
  constructor(public url: string) {}
}

export class FakeWebContents extends Emitter {
  readonly id = nextWebContentsId++;
  readonly mainFrame: FakeWebFrame;
  readonly sent: Array<{ channel: string; args: unknown[] }> = [];
  windowOpenHandler: ((details: { url: string }) => unknown) | null = null;
  destroyed = false;
  constructor(url = 'app://exobar/index.html') {
    super();
    this.mainFrame = new FakeWebFrame(url);
  }
  send(channel: string, ...args: unknown[]) {
    this.sent.push({ channel, args });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => unknown) {
    this.windowOpenHandler = handler;
  }
  isDestroyed() {
    return this.destroyed;
  }
  getURL() {
    return this.mainFrame.url;
  }
}

export class BrowserWindow extends Emitter {
  static instances: BrowserWindow[] = [];
  readonly webContents = new FakeWebContents();
  visible = false;
  destroyed = false;
  bounds = { x: 0, y: 0, width: 0, height: 0 };
  loadedUrl: string | null = null;
  constructor(public readonly options: Record<string, unknown> & { width?: number; height?: number; webPreferences?: Record<string, unknown> }) {
    super();
    this.bounds.width = options.width ?? 800;
    this.bounds.height = options.height ?? 600;
    BrowserWindow.instances.push(this);
  }
  /** Loads, then (as Electron does once the page is there) emits `did-finish-load` on the webContents. */
  loadURL = vi.fn(async (url: string) => {
    this.loadedUrl = url;
    this.webContents.mainFrame.url = url;
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.webContents.destroyed) this.webContents.emit('did-finish-load');
  });
  show = vi.fn(() => {
    if (this.destroyed) throw new TypeError('Object has been destroyed');
    this.visible = true;
    this.emit('show');
  });
  hide = vi.fn(() => {
    this.visible = false;
    this.emit('hide');
  });
  focus = vi.fn();
  isVisible() {
    return this.visible;
  }
  isDestroyed() {
    return this.destroyed;
  }
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.visible = false;
    this.webContents.destroyed = true;
    this.emit('closed');
  }
  /** Like Electron: `close` is cancellable; unless a listener prevents it, the window is destroyed. */
  close = vi.fn(() => {
    if (this.destroyed) return;
    if (this.fire('close').defaultPrevented) return;
    this.destroy();
  });
  getSize() {
    return [this.bounds.width, this.bounds.height];
  }
  setPosition = vi.fn((x: number, y: number) => {
    this.bounds.x = x;
    this.bounds.y = y;
  });
  setVisibleOnAllWorkspaces = vi.fn();
}

export class Tray extends Emitter {
  static instances: Tray[] = [];
  image: unknown;
  title = '';
  tooltip = '';
  menu: Menu | null = null;
  /** The context menu on screen (opened by a click on the icon), or null. */
  openMenu: Menu | null = null;
  /** Menus swapped in while one was open: real Electron closes or freezes the open one. */
  swapsWhileOpen = 0;
  bounds = { x: 1000, y: 0, width: 24, height: 24 };
  destroyed = false;
  constructor(image: unknown) {
    super();
    this.image = image;
    Tray.instances.push(this);
  }
  setImage = vi.fn((image: unknown) => {
    this.image = image;
  });
  setTitle = vi.fn((title: string) => {
    this.title = title;
  });
  setToolTip = vi.fn((tooltip: string) => {
    this.tooltip = tooltip;
  });
  setContextMenu = vi.fn((menu: Menu | null) => {
    if (this.openMenu) {
      this.swapsWhileOpen++;
      this.closeMenu();
    }
    this.menu = menu;
  });
  popUpContextMenu = vi.fn();
  /** A click on the icon: `click`, then the context menu opens (`menu-will-show`) and stays open. */
  clickIcon() {
    this.fire('click', this.bounds, { x: this.bounds.x + 5, y: 5 });
    if (this.menu && !this.openMenu) {
      this.openMenu = this.menu;
      this.menu.fire('menu-will-show');
    }
  }
  /** The open menu closes (Escape, a click elsewhere, or an item chosen: its click comes after this). */
  closeMenu() {
    const open = this.openMenu;
    if (!open) return;
    this.openMenu = null;
    open.fire('menu-will-close');
  }
  /** Chooses an item of the open menu by label prefix: the menu closes, then the item's click runs. */
  choose(label: string, checked?: boolean) {
    const open = this.openMenu;
    if (!open) throw new Error('fake tray: no menu is open');
    const item = open.items.find((i) => typeof i.label === 'string' && i.label.startsWith(label)) as
      { click?: (item: { checked?: boolean }) => void } | undefined;
    if (!item) throw new Error(`fake tray: no item ${label}`);
    this.closeMenu();
    item.click?.({ checked });
  }
  getBounds() {
    return this.bounds;
  }
  destroy() {
    this.destroyed = true;
  }
  isDestroyed() {
    return this.destroyed;
  }
}

export class Menu extends Emitter {
  static applicationMenu: Menu | null = null;
  constructor(public readonly items: Array<Record<string, unknown>>) {
    super();
  }
  static buildFromTemplate = vi.fn((template: Array<Record<string, unknown>>) => new Menu(template.map((item) => ({ ...item }))));
  /** The item with this id; its `checked` can be changed in place, as on Electron's MenuItem. */
  getMenuItemById(id: string): Record<string, unknown> | null {
    return this.items.find((item) => item.id === id) ?? null;
  }
  static setApplicationMenu = vi.fn((menu: Menu | null) => {
    Menu.applicationMenu = menu;
  });
  static getApplicationMenu() {
    return Menu.applicationMenu;
  }
}

export class FakeNativeImage {
  template = false;
  constructor(public readonly path: string) {}
  setTemplateImage(flag: boolean) {
    this.template = flag;
  }
  /** Like Electron: an image read from a path that is not there is empty (no error is thrown). */
  isEmpty() {
    return this.path === '' || !existsSync(this.path);
  }
}

export const nativeImage = {
  createFromPath: vi.fn((path: string) => new FakeNativeImage(path)),
  createEmpty: vi.fn(() => new FakeNativeImage('')),
};

export class Notification extends Emitter {
  static shown: Notification[] = [];
  static supported = true;
  /**
   * When set, every notification fails after show() with this error, as macOS does for an
   * unsigned or ad-hoc signed app or one the user denied (isSupported() stays true).
   */
  static failWith: string | null = null;
  static isSupported() {
    return Notification.supported;
  }
  constructor(public readonly options: { title: string; body?: string }) {
    super();
  }
  show() {
    Notification.shown.push(this);
    const error = Notification.failWith;
    if (error) setImmediate(() => this.fire('failed', error));
  }
}

type IpcHandler = (event: unknown, ...args: unknown[]) => unknown;

class FakeIpcMain extends Emitter {
  readonly handlers = new Map<string, IpcHandler>();
  handle = vi.fn((channel: string, handler: IpcHandler) => {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  });
  removeHandler = vi.fn((channel: string) => {
    this.handlers.delete(channel);
  });
  /** Calls a handler as a renderer's invoke would; `from` is the sending webContents. */
  async invoke(channel: string, from: FakeWebContents, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return handler({ sender: from, senderFrame: from.mainFrame }, ...args);
  }
}

/** The repository root: the app path in development (build/tray is there). */
const REPO_ROOT = join(import.meta.dirname, '..', '..');

type LoginItemStatus = 'not-registered' | 'enabled' | 'requires-approval' | 'not-found';

class FakeApp extends Emitter {
  /** Back to a fresh, not-ready app with no listeners. */
  resetState() {
    this.removeAllListeners();
    this.isPackaged = false;
    this.ready = false;
    this.active = false;
    this.singleInstanceLock = true;
    this.loginItem = { openAtLogin: false, status: 'not-registered' };
    this.loginItemProblem = null;
    this.appPath = REPO_ROOT;
    this.paths = { userData: '/tmp/exobar-fake-user-data', downloads: '/tmp/exobar-fake-downloads', logs: '/tmp/exobar-fake-logs' };
    this.exitCode = null;
  }
  isPackaged = false;
  ready = false;
  /** Whether the app is the active one (menu bar, keyboard focus). */
  active = false;
  singleInstanceLock = true;
  /** The login item as macOS has it (SMAppService on macOS 13+). */
  loginItem: { openAtLogin: boolean; status: LoginItemStatus } = { openAtLogin: false, status: 'not-registered' };
  /** When set, registering the login item does not enable it (needs approval in System Settings, or the app is not found). */
  loginItemProblem: Exclude<LoginItemStatus, 'enabled' | 'not-registered'> | null = null;
  appPath = REPO_ROOT;
  paths: Record<string, string> = { userData: '/tmp/exobar-fake-user-data', downloads: '/tmp/exobar-fake-downloads', logs: '/tmp/exobar-fake-logs' };
  exitCode: number | null = null;
  readonly dock = { hide: vi.fn(), show: vi.fn() };
  whenReady = vi.fn(async () => {
    this.ready = true;
  });
  isReady() {
    return this.ready;
  }
  requestSingleInstanceLock = vi.fn(() => this.singleInstanceLock);
  getPath = vi.fn((name: string) => {
    const path = this.paths[name];
    if (!path) throw new Error(`fake app: no path ${name}`);
    return path;
  });
  getAppPath = vi.fn(() => this.appPath);
  getVersion = vi.fn(() => '0.1.0');
  setLoginItemSettings = vi.fn((settings: { openAtLogin: boolean }) => {
    if (!settings.openAtLogin) this.loginItem = { openAtLogin: false, status: 'not-registered' };
    else if (this.loginItemProblem) this.loginItem = { openAtLogin: false, status: this.loginItemProblem };
    else this.loginItem = { openAtLogin: true, status: 'enabled' };
  });
  getLoginItemSettings = vi.fn(() => ({ ...this.loginItem, openAsHidden: false, wasOpenedAtLogin: false, wasOpenedAsHidden: false, restoreState: false }));
  /** The user switches the login item in System Settings > General > Login Items. */
  toggleLoginItemInSystemSettings(enabled: boolean) {
    this.loginItem = enabled ? { openAtLogin: true, status: 'enabled' } : { openAtLogin: false, status: 'not-registered' };
  }
  /** Opening exobar again from Finder, Spotlight or Launchpad while it runs: macOS reopens the running app. */
  relaunchFromFinder() {
    this.active = true;
    this.fire(
      'activate',
      BrowserWindow.instances.some((w) => w.isVisible()),
    );
  }
  /**
   * A click on another app's menu-bar item while exobar is active: that app becomes active
   * and exobar resigns; its windows get no `blur` (the popover would stay up).
   */
  clickOtherMenuBarItem() {
    if (!this.active) return;
    this.active = false;
    this.fire('did-resign-active');
  }
  /** Like Electron: emits before-quit (cancellable), then will-quit, then "exits". */
  quit = vi.fn(() => {
    if (this.fire('before-quit').defaultPrevented) return;
    if (this.fire('will-quit').defaultPrevented) return;
    this.exitCode = 0;
  });
  exit = vi.fn((code = 0) => {
    this.exitCode = code;
  });
  /** Like Electron on macOS: only `steal` makes the app active while another app is (plain focus is a polite request). */
  focus = vi.fn((options?: { steal?: boolean }) => {
    if (!this.active && options?.steal) {
      this.active = true;
      this.fire('did-become-active');
    }
  });
}

const handlers: Record<string, Listener> = {};

export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived: vi.fn((fn: Listener) => (handlers.headers = fn)),
      onBeforeRequest: vi.fn((fn: Listener) => (handlers.before = fn)),
    },
    setPermissionRequestHandler: vi.fn(),
    setPermissionCheckHandler: vi.fn(),
  },
};

export const app = new FakeApp();
export const ipcMain = new FakeIpcMain();
export const ipcRenderer = Object.assign(new Emitter(), { invoke: vi.fn(async (..._args: unknown[]): Promise<unknown> => undefined) });
export const contextBridge = { exposeInMainWorld: vi.fn() };
export const dialog = {
  showSaveDialog: vi.fn(async (..._args: unknown[]) => ({ canceled: true, filePath: '' as string | undefined })),
  showMessageBox: vi.fn(async (..._args: unknown[]) => ({ response: 0, checkboxChecked: false })),
  showErrorBox: vi.fn(),
};
export const shell = { openExternal: vi.fn(async () => undefined), showItemInFolder: vi.fn() };
export const clipboard = { writeText: vi.fn(), text: '' };
clipboard.writeText.mockImplementation((text: string) => {
  clipboard.text = text;
});
export const screen = {
  getDisplayMatching: vi.fn(() => ({ workArea: { x: 0, y: 24, width: 1512, height: 958 } })),
  getDisplayNearestPoint: vi.fn(() => ({ workArea: { x: 0, y: 24, width: 1512, height: 958 } })),
};
export const protocol = { registerSchemesAsPrivileged: vi.fn(), handle: vi.fn() };

/** Test access to the fakes, and a reset between tests. */
export const fake = {
  app,
  ipcMain,
  windows: BrowserWindow.instances,
  trays: Tray.instances,
  notifications: Notification.shown,
  reset() {
    app.resetState();
    ipcMain.handlers.clear();
    ipcMain.removeAllListeners();
    BrowserWindow.instances.length = 0;
    Tray.instances.length = 0;
    Notification.shown.length = 0;
    Notification.supported = true;
    Notification.failWith = null;
    Menu.applicationMenu = null;
    ipcRenderer.removeAllListeners();
    vi.clearAllMocks();
  },
};

export default {
  app,
  BrowserWindow,
  Tray,
  Menu,
  nativeImage,
  Notification,
  ipcMain,
  ipcRenderer,
  contextBridge,
  dialog,
  shell,
  clipboard,
  screen,
  protocol,
  session,
};
