/**
 * The menu-bar icon: glyph, title and tooltip from the snapshot (tray-state.ts) and
 * the menu (tray-menu.ts). A click opens the menu, the glance: every model with its
 * status and queue; "Open exobar" opens the popover.
 */
import { join } from 'node:path';
import { Menu, nativeImage, Tray, type NativeImage } from 'electron';
import type { Settings } from '../../shared/api';
import type { Snapshot } from '../../shared/snapshot';
import { buildTrayMenu, type TrayMenuActions } from './tray-menu';
import { TRAY_STATES, trayViewOf, type TrayState } from './tray-state';

/** The 1x file of a state's template image; Electron picks up the @2x file beside it. */
export function trayImageFile(dir: string, state: TrayState): string {
  return join(dir, `tray-${state}Template.png`);
}

export class TrayController {
  private readonly tray: Tray;
  private readonly images = new Map<TrayState, NativeImage>();
  private shown = { state: '' as TrayState | '', title: '', tooltip: '', menu: '' };

  constructor(
    imagesDir: string,
    private readonly actions: TrayMenuActions,
  ) {
    for (const state of TRAY_STATES) {
      const image = nativeImage.createFromPath(trayImageFile(imagesDir, state));
      // The "Template" file name already says so; set it anyway so macOS tints it for dark mode.
      image.setTemplateImage(true);
      this.images.set(state, image);
    }
    this.tray = new Tray(this.images.get('idle')!);
  }

  /** Shows what the snapshot says; Electron is called only for what changed. */
  update(snapshot: Snapshot, settings: Pick<Settings, 'startAtLogin'>): void {
    const view = trayViewOf(snapshot);
    if (view.state !== this.shown.state) this.tray.setImage(this.images.get(view.state)!);
    if (view.title !== this.shown.title) this.tray.setTitle(view.title, { fontType: 'monospacedDigit' });
    if (view.tooltip !== this.shown.tooltip) this.tray.setToolTip(view.tooltip);
    const template = buildTrayMenu(snapshot, settings, this.actions);
    // Snapshots come up to ten times a second; rebuild the native menu only when it reads differently.
    const signature = JSON.stringify(template.map(({ id, label, enabled, checked, type }) => [id, label, enabled, checked, type]));
    if (signature !== this.shown.menu) this.tray.setContextMenu(Menu.buildFromTemplate(template));
    this.shown = { state: view.state, title: view.title, tooltip: view.tooltip, menu: signature };
  }

  /** Where the icon is on screen, to anchor the popover. */
  bounds(): Electron.Rectangle {
    return this.tray.getBounds();
  }

  destroy(): void {
    this.tray.destroy();
  }
}
