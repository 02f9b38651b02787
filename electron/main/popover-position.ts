/**
 * Where the popover goes: centred under the tray icon on macOS (the menu bar is at
 * the top), above it when the tray sits at the bottom of the screen, always kept
 * inside the display's work area. Pure, so it is tested with made-up geometry.
 */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

/** Space between the menu bar and the popover. */
export const POPOVER_GAP = 4;

const clamp = (value: number, min: number, max: number) => Math.max(min, Math.min(value, Math.max(min, max)));

/**
 * The popover's top-left corner for a tray icon at `tray` on a display whose usable
 * area is `workArea`. A tray with no bounds (width and height 0, as some Linux
 * desktops report) puts the popover in the work area's top-right corner.
 */
export function popoverPosition(tray: Rect, size: Size, workArea: Rect, gap = POPOVER_GAP): { x: number; y: number } {
  const right = workArea.x + workArea.width - size.width;
  const bottom = workArea.y + workArea.height - size.height;
  if (tray.width === 0 && tray.height === 0) {
    return { x: Math.round(right - gap), y: Math.round(workArea.y + gap) };
  }
  const x = clamp(tray.x + tray.width / 2 - size.width / 2, workArea.x, right);
  const trayCentreY = tray.y + tray.height / 2;
  const trayAtBottom = trayCentreY > workArea.y + workArea.height / 2;
  const y = trayAtBottom ? tray.y - size.height - gap : tray.y + tray.height + gap;
  return { x: Math.round(x), y: Math.round(clamp(y, workArea.y, bottom)) };
}
