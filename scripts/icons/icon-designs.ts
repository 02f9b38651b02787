/**
 * The drawings behind build/: one tray glyph per tray state and the app icon.
 *
 * Tray glyphs are macOS template images: black plus alpha only, so the menu bar
 * tints them for light and dark mode; knocked-out parts are transparent. The
 * drawing unit is one point of a 16 pt menu-bar icon.
 */
import { circle, difference, intersection, rect, ring, roundedRect, segment, triangle, union, type Layer, type Rgb, type Shape } from './raster';

/** Must match TrayState in electron/main/tray-state.ts (a test checks it). */
export const TRAY_GLYPH_STATES = ['idle', 'serving', 'prefilling', 'warning', 'failed'] as const;
export type TrayGlyphState = (typeof TRAY_GLYPH_STATES)[number];

const C = 8;
const OUTER = 6.5;
const INNER = 5;

const bang: Shape = union(segment(8, 5.6, 8, 9.6, 1.7), circle(8, 12.1, 0.95));

/** The glyph for each state; all share the 13 pt circle so the icon does not jump. */
export const TRAY_GLYPHS: Record<TrayGlyphState, Shape> = {
  // Nothing loaded: an empty slot.
  idle: ring(C, C, OUTER, INNER),
  // A model is ready: the slot is full.
  serving: circle(C, C, OUTER),
  // A prompt is being prefilled: the slot is filling up from the bottom.
  prefilling: union(ring(C, C, OUTER, INNER), intersection(circle(C, C, INNER - 1), rect(0, 8, 16, 16))),
  // Needs attention (shared-GPU fast-synch hazard, mismatch): a warning sign.
  warning: difference(triangle(8, 1.2, 15.2, 14.6, 0.8, 14.6), bang),
  // A runner failed: a full slot with a cross knocked out.
  failed: difference(circle(C, C, OUTER), segment(5.4, 5.4, 10.6, 10.6, 1.7), segment(10.6, 5.4, 5.4, 10.6, 1.7)),
};

export function trayGlyphLayers(state: TrayGlyphState): Layer[] {
  return [{ shape: TRAY_GLYPHS[state], color: [0, 0, 0] }];
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];

/**
 * The app icon on a 1024-unit canvas (macOS icon grid: an 824-unit rounded square
 * with 100 units of margin): a dark tile with a menu bar and two model bars, one
 * of them filling (the prefill this app watches).
 */
export function appIconLayers(): Layer[] {
  const tile = roundedRect(100, 100, 924, 924, 185);
  const top: Rgb = [36, 52, 92];
  const bottom: Rgb = [12, 18, 38];
  return [
    { shape: tile, color: (_x, y) => mix(top, bottom, (y - 100) / 824) },
    // The menu bar across the top of the tile.
    { shape: intersection(tile, rect(100, 100, 924, 250)), color: [255, 255, 255], opacity: 0.14 },
    // The tray glyph, drawn large in the menu bar.
    { shape: circle(700, 175, 40), color: [255, 255, 255] },
    // Two models: tracks, then their progress.
    { shape: roundedRect(200, 420, 824, 500, 40), color: [255, 255, 255], opacity: 0.16 },
    { shape: roundedRect(200, 420, 720, 500, 40), color: [94, 220, 190] },
    { shape: roundedRect(200, 620, 824, 700, 40), color: [255, 255, 255], opacity: 0.16 },
    { shape: roundedRect(200, 620, 470, 700, 40), color: [255, 190, 80] },
  ];
}
