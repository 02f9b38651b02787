/**
 * The popover: a frameless window under the tray icon that hides when it loses
 * focus, like a menu-bar app's panel. Created once, hidden, so it opens at once,
 * and never closed until the app quits: Cmd+W (`close`) hides it.
 *
 * When it hides: on `blur` (another window of any app takes the focus), on the app's
 * `did-resign-active` (another app becomes active: clicking another app's menu-bar
 * item does that, and sends the window no `blur`), and on a click on exobar's own
 * icon (the tray controller calls hide). Showing it makes the app active
 * (`app.focus({steal: true})`), so that its keys work and its deactivation is seen.
 * Security settings follow Electron's checklist (context isolation, sandbox, no
 * Node in the page); the page comes from app://exobar (app-protocol.ts).
 */
import { app, BrowserWindow, screen, type WebContents } from 'electron';
import { popoverPosition, type Rect } from './popover-position';

export const POPOVER_SIZE = { width: 420, height: 620 };

export interface PopoverOptions {
  preload: string;
  url: string;
  /** The tray icon's bounds, to anchor the window. */
  anchor(): Rect;
  /** Developer tools only outside the packaged app. */
  devTools: boolean;
  /** True once the app is quitting: only then may the window close. */
  quitting(): boolean;
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
    this.window.on('blur', () => this.hideUnlessPinned());
    app.on('did-resign-active', () => this.hideUnlessPinned());
    // Cmd+W (or any close) hides: a destroyed popover could not be opened again.
    this.window.on('close', (event) => {
      if (options.quitting()) return;
      event.preventDefault();
      this.hide();
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
    // A UI-element app is not made active by showing a window: without this the page gets no keys.
    app.focus({ steal: true });
    this.window.focus();
  }

  /** The window to parent a dialog to (a sheet on the popover), or null when it is not shown. */
  dialogParent(): BrowserWindow | null {
    return this.isVisible() ? this.window : null;
  }

  hide(): void {
    if (!this.window.isDestroyed()) this.window.hide();
  }

  /** Hides unless a dialog holds it open or its developer tools are open. */
  private hideUnlessPinned(): void {
    if (this.pins === 0 && !this.window.webContents.isDevToolsOpened?.()) this.hide();
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
