import { describe, expect, it } from 'vitest';
import { popoverPosition } from './popover-position';

// A 1512x982 MacBook display with a 24 pt menu bar: the work area starts under it.
const workArea = { x: 0, y: 24, width: 1512, height: 958 };
const size = { width: 400, height: 560 };

describe('popover position', () => {
  it('centres the popover under the tray icon, just below the menu bar', () => {
    const tray = { x: 1000, y: 0, width: 24, height: 24 };
    expect(popoverPosition(tray, size, workArea)).toEqual({ x: 1012 - 200, y: 28 });
  });

  it('keeps it inside the work area when the icon is near the right edge', () => {
    const tray = { x: 1490, y: 0, width: 22, height: 24 };
    expect(popoverPosition(tray, size, workArea).x).toBe(1512 - 400);
  });

  it('keeps it inside the work area when the icon is near the left edge', () => {
    expect(popoverPosition({ x: 10, y: 0, width: 22, height: 24 }, size, workArea).x).toBe(0);
  });

  it('works on a second display to the left (negative coordinates)', () => {
    const second = { x: -1920, y: 25, width: 1920, height: 1055 };
    expect(popoverPosition({ x: -300, y: 0, width: 24, height: 25 }, size, second)).toEqual({ x: -488, y: 29 });
  });

  it('goes above a tray at the bottom of the screen', () => {
    const bottomBar = { x: 0, y: 0, width: 1920, height: 1045 };
    expect(popoverPosition({ x: 1800, y: 1045, width: 24, height: 30 }, size, bottomBar)).toEqual({ x: 1920 - 400, y: 1045 - 560 - 4 });
  });

  it('falls back to the top-right corner when the tray reports no bounds', () => {
    expect(popoverPosition({ x: 0, y: 0, width: 0, height: 0 }, size, workArea)).toEqual({ x: 1108, y: 28 });
  });

  it('rounds to whole pixels', () => {
    const { x, y } = popoverPosition({ x: 1000.5, y: 0, width: 23, height: 24.5 }, size, workArea);
    expect(Number.isInteger(x) && Number.isInteger(y)).toBe(true);
  });
});
