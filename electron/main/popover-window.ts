/**
 * The popover: a frameless window under the tray icon that hides when it loses
 * focus, like a menu-bar app's panel. Created once, hidden, so it opens at once.
 * Security settings follow Electron's checklist (context isolation, sandbox, no
 * Node in the page); the page comes from app://exobar (app-protocol.ts).
 */
import { BrowserWindow, screen, type WebContents } from 'electron';
import { popoverPosition, type Rect } from './popover-position';

export const POPOVER_SIZE = { width: 420, height: 620 };

export interface PopoverOptions {
  preload: string;
  url: string;
  /** The tray icon's bounds, to anchor the window. */
  anchor(): Rect;
  /** Developer tools only outside the packaged app. */
  devTools: boolean;
}

export class PopoverWindow {
  readonly window: BrowserWindow;
  private pins = 0;

  constructor(private readonly options: PopoverOptions) {
    this.window = new BrowserWindow({
      ...POPOVER_SIZE,
      show: false,
      frame: false,
      resizable: false,
      movable: false,
      minimizable: false,
      maximizable: false,
      fullscreenable: false,
      skipTaskbar: true,
      alwaysOnTop: true,
      hasShadow: true,
      vibrancy: 'popover',
      webPreferences: {
        preload: options.preload,
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        nodeIntegrationInWorker: false,
        webSecurity: true,
        allowRunningInsecureContent: false,
        webviewTag: false,
        navigateOnDragDrop: false,
        spellcheck: false,
        devTools: options.devTools,
      },
    });
    // Over full-screen apps too, as a menu-bar panel is. The app is already a UI element
    // (LSUIElement, dock hidden): skip the process-type switch, which would flash a Dock icon.
    this.window.setVisibleOnAllWorkspaces(true, { visibleOnFullScreen: true, skipTransformProcessType: true });
    this.window.on('blur', () => {
      if (this.pins === 0 && !this.window.webContents.isDevToolsOpened?.()) this.hide();
    });
    void this.window.loadURL(options.url);
  }

  get webContents(): WebContents | null {
    return this.window.isDestroyed() ? null : this.window.webContents;
  }

  isVisible(): boolean {
    return !this.window.isDestroyed() && this.window.isVisible();
  }

  /** Shows the popover under the tray icon, on the display the icon is on. */
  show(): void {
    if (this.window.isDestroyed()) return;
    const anchor = this.options.anchor();
    const { workArea } = screen.getDisplayMatching(anchor);
    const [width = POPOVER_SIZE.width, height = POPOVER_SIZE.height] = this.window.getSize();
    const { x, y } = popoverPosition(anchor, { width, height }, workArea);
    this.window.setPosition(x, y, false);
    this.window.show();
    this.window.focus();
  }

  hide(): void {
    if (!this.window.isDestroyed()) this.window.hide();
  }

  toggle(): void {
    if (this.isVisible()) this.hide();
    else this.show();
  }

  /** Keeps the popover open while `work` runs (a save dialog takes the focus away). */
  async pinWhile<T>(work: () => Promise<T>): Promise<T> {
    this.pins += 1;
    try {
      return await work();
    } finally {
      this.pins -= 1;
    }
  }

  /** Sends to the page if it exists (a push before it loaded is fine: the page asks for the latest). */
  send(channel: string, payload: unknown): void {
    const contents = this.webContents;
    if (contents && !contents.isDestroyed()) contents.send(channel, payload);
  }

  destroy(): void {
    if (!this.window.isDestroyed()) this.window.destroy();
  }
}
