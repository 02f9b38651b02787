/**
 * The menu-bar icon: glyph, title and tooltip from the snapshot (tray-state.ts) and
 * the menu (tray-menu.ts). A click opens the menu, the glance: every model with its
 * status; "Open exobar" opens the popover.
 *
 * The native menu is never swapped while it is open: `setContextMenu` on an open menu
 * closes or freezes it (Electron issues 4801, 10951, 12803). A change that arrives
 * while it is open waits for `menu-will-close`; the labels carry no fast-changing
 * numbers (the title and the popover do), so streaming requests rebuild nothing.
 */
import { join } from 'node:path';
import { Menu, nativeImage, Tray, type NativeImage } from 'electron';
import type { Settings } from '../../shared/api';
import type { Snapshot } from '../../shared/snapshot';
import { buildTrayMenu, START_AT_LOGIN_ID, type TrayMenuActions } from './tray-menu';
import { TRAY_STATES, trayViewOf, type TrayState } from './tray-state';

/** The 1x file of a state's template image; Electron picks up the @2x file beside it. */
export function trayImageFile(dir: string, state: TrayState): string {
  return join(dir, `tray-${state}Template.png`);
}

/** Shown beside an icon whose image is missing, so there is still something to click. */
export const FALLBACK_TITLE = 'exobar';

export interface TrayControllerOptions {
  /** The login item's state as macOS has it, read each time the menu opens. */
  startAtLogin(): boolean;
  /** The icon was clicked or its menu is opening (the popover hides then). */
  onOpen?(): void;
  /** A problem worth a log line (a missing image). */
  warn?(message: string): void;
}

/** The title beside the icon: the view's, plus a badge for alerts macOS did not show. */
export function trayTitle(viewTitle: string, unseenAlerts: number, imageMissing: boolean): string {
  const base = viewTitle || (imageMissing ? FALLBACK_TITLE : '');
  return unseenAlerts > 0 ? `${base} ⚠ ${unseenAlerts}`.trim() : base;
}

/** What a menu reads as (its submenus' checked items included): equal signatures need no rebuild. */
export function menuSignature(template: Electron.MenuItemConstructorOptions[]): string {
  const rows = (items: Electron.MenuItemConstructorOptions[]): unknown[] =>
    items.map(({ id, label, enabled, checked, type, submenu }) => [id, label, enabled, checked, type, Array.isArray(submenu) ? rows(submenu) : null]);
  return JSON.stringify(rows(template));
}

export class TrayController {
  private readonly tray: Tray;
  private readonly images = new Map<TrayState, NativeImage>();
  private readonly imageMissing: boolean;
  private shown = { state: '' as TrayState | '', title: '', tooltip: '', menu: '' };
  private viewTitle = '';
  private badge = 0;
  private menuOpen = false;
  /** The menu to install once the open one closes. */
  private pending: { menu: Electron.MenuItemConstructorOptions[]; signature: string } | null = null;

  constructor(
    imagesDir: string,
    private readonly actions: TrayMenuActions,
    private readonly options: TrayControllerOptions,
  ) {
    for (const state of TRAY_STATES) {
      const image = nativeImage.createFromPath(trayImageFile(imagesDir, state));
      // The "Template" file name already says so; set it anyway so macOS tints it for dark mode.
      image.setTemplateImage(true);
      this.images.set(state, image);
    }
    // A wrong path gives an empty image, no error: with an empty title too, the icon would be invisible.
    this.imageMissing = this.images.get('idle')!.isEmpty();
    if (this.imageMissing) options.warn?.(`tray images are missing in ${imagesDir}: showing "${FALLBACK_TITLE}" instead`);
    this.tray = new Tray(this.images.get('idle')!);
    this.tray.on('click', () => options.onOpen?.());
    this.setTitle();
  }

  /** Shows what the snapshot says; Electron is called only for what changed. */
  update(snapshot: Snapshot, settings: Pick<Settings, 'startAtLogin' | 'menuBarTitle'>): void {
    const view = trayViewOf(snapshot, settings.menuBarTitle);
    if (view.state !== this.shown.state) this.tray.setImage(this.images.get(view.state)!);
    this.viewTitle = view.title;
    this.setTitle();
    if (view.tooltip !== this.shown.tooltip) this.tray.setToolTip(view.tooltip);
    const template = buildTrayMenu(snapshot, settings, this.actions);
    // Snapshots come up to ten times a second; rebuild the native menu only when it reads differently.
    const signature = menuSignature(template);
    this.shown = { ...this.shown, state: view.state, tooltip: view.tooltip };
    if (signature === this.shown.menu) {
      this.pending = null;
      return;
    }
    if (this.menuOpen) this.pending = { menu: template, signature };
    else this.install(template, signature);
  }

  /** The badge: alerts macOS did not show since the popover was last opened. */
  setBadge(unseenAlerts: number): void {
    this.badge = unseenAlerts;
    this.setTitle();
  }

  /** Where the icon is on screen, to anchor the popover. */
  bounds(): Electron.Rectangle {
    return this.tray.getBounds();
  }

  destroy(): void {
    this.tray.destroy();
  }

  private setTitle(): void {
    const title = trayTitle(this.viewTitle, this.badge, this.imageMissing);
    if (title !== this.shown.title) this.tray.setTitle(title, { fontType: 'monospacedDigit' });
    this.shown.title = title;
  }

  private install(template: Electron.MenuItemConstructorOptions[], signature: string): void {
    const menu = Menu.buildFromTemplate(template);
    menu.on('menu-will-show', () => {
      this.menuOpen = true;
      // The login item may have been changed in System Settings: show its state now, in place.
      const item = menu.getMenuItemById(START_AT_LOGIN_ID);
      if (item) item.checked = this.options.startAtLogin();
      this.options.onOpen?.();
    });
    menu.on('menu-will-close', () => {
      this.menuOpen = false;
      // After the close has finished (an item's click comes after this event): then swap.
      setImmediate(() => {
        const next = this.pending;
        this.pending = null;
        if (next && !this.menuOpen) this.install(next.menu, next.signature);
        else if (next) this.pending = next;
      });
    });
    this.tray.setContextMenu(menu);
    this.shown.menu = signature;
  }
}
