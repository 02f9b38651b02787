/**
 * The application menu. Without one, Electron installs its default, whose Close
 * Window (Cmd+W) destroys the popover. A menu-bar app (LSUIElement) never shows its
 * menu bar, but the menu's key equivalents still work while it is active: Edit for
 * copy, paste and select all in the page, and Quit (Cmd+Q, through the clean quit).
 * No File or Window menu, so no Close Window.
 */
import type { MenuItemConstructorOptions } from 'electron';

export function applicationMenuTemplate(): MenuItemConstructorOptions[] {
  return [
    { label: 'exobar', submenu: [{ role: 'about' }, { type: 'separator' }, { role: 'hide' }, { type: 'separator' }, { role: 'quit' }] },
    {
      label: 'Edit',
      submenu: [{ role: 'undo' }, { role: 'redo' }, { type: 'separator' }, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }],
    },
  ];
}
