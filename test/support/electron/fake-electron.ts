/**
 * A fake of the parts of Electron the glue uses, for `vi.mock('electron', ...)`:
 * the binary is absent on CI machines, and the glue's behaviour (what it asks of
 * Electron, in which order) is what the tests check. Everything records its calls.
 *
 *   vi.mock('electron', () => import('./fake-electron'));
 *   import { fake } from './fake-electron';   // state + reset()
 */
import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

type Listener = (...args: never[]) => unknown;

class Emitter extends EventEmitter {
  /** Calls the listeners like Electron would, with an event whose preventDefault is recorded. */
  fire(name: string, ...args: unknown[]): { defaultPrevented: boolean } {
    const event = { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; } };
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
  loadURL = vi.fn(async (url: string) => {
    this.loadedUrl = url;
    this.webContents.mainFrame.url = url;
  });
  show = vi.fn(() => {
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
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
  }
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
    this.menu = menu;
  });
  popUpContextMenu = vi.fn();
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

export class Menu {
  constructor(public readonly items: Array<Record<string, unknown>>) {}
  static buildFromTemplate = vi.fn((template: Array<Record<string, unknown>>) => new Menu(template));
}

export class FakeNativeImage {
  template = false;
  constructor(public readonly path: string) {}
  setTemplateImage(flag: boolean) {
    this.template = flag;
  }
  isEmpty() {
    return false;
  }
}

export const nativeImage = {
  createFromPath: vi.fn((path: string) => new FakeNativeImage(path)),
  createEmpty: vi.fn(() => new FakeNativeImage('')),
};

export class Notification extends Emitter {
  static shown: Notification[] = [];
  static supported = true;
  static isSupported() {
    return Notification.supported;
  }
  constructor(public readonly options: { title: string; body?: string }) {
    super();
  }
  show() {
    Notification.shown.push(this);
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

class FakeApp extends Emitter {
  /** Back to a fresh, not-ready app with no listeners. */
  resetState() {
    this.removeAllListeners();
    this.isPackaged = false;
    this.ready = false;
    this.singleInstanceLock = true;
    this.loginItem = { openAtLogin: false };
    this.paths = { userData: '/tmp/exobar-fake-user-data', downloads: '/tmp/exobar-fake-downloads' };
    this.exitCode = null;
  }
  isPackaged = false;
  ready = false;
  singleInstanceLock = true;
  loginItem = { openAtLogin: false };
  paths: Record<string, string> = { userData: '/tmp/exobar-fake-user-data', downloads: '/tmp/exobar-fake-downloads' };
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
  getAppPath = vi.fn(() => '/tmp/exobar-fake-app');
  getVersion = vi.fn(() => '0.1.0');
  setLoginItemSettings = vi.fn((settings: { openAtLogin: boolean }) => {
    this.loginItem = { openAtLogin: settings.openAtLogin };
  });
  getLoginItemSettings = vi.fn(() => ({ ...this.loginItem }));
  /** Like Electron: emits before-quit (cancellable), then will-quit, then "exits". */
  quit = vi.fn(() => {
    if (this.fire('before-quit').defaultPrevented) return;
    if (this.fire('will-quit').defaultPrevented) return;
    this.exitCode = 0;
  });
  exit = vi.fn((code = 0) => {
    this.exitCode = code;
  });
  focus = vi.fn();
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
