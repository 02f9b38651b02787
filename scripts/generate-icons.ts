/**
 * Writes the images electron-builder and the tray use into build/:
 *   build/tray/tray-<state>Template.png (16x16) and @2x (32x32): macOS template images
 *   build/icon.png (1024x1024): the app icon (electron-builder turns it into icon.icns)
 *
 * Run: node --import tsx scripts/generate-icons.ts [outDir]
 * The output is deterministic; a test regenerates it and compares with the committed files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appIconLayers, TRAY_GLYPH_STATES, trayGlyphLayers } from './icons/icon-designs';
import { encodePng } from './icons/png-encoder';
import { rasterize } from './icons/raster';

/** File name of a tray image; macOS treats names ending in "Template" as template images. */
export function trayImageName(state: string, scale: 1 | 2): string {
  return `tray-${state}Template${scale === 2 ? '@2x' : ''}.png`;
}

/** Renders every icon into `outDir` and returns the files written, relative to it. */
export function generateIcons(outDir: string): string[] {
  const written: string[] = [];
  mkdirSync(join(outDir, 'tray'), { recursive: true });
  for (const state of TRAY_GLYPH_STATES) {
    for (const scale of [1, 2] as const) {
      const file = join('tray', trayImageName(state, scale));
      writeFileSync(join(outDir, file), encodePng(rasterize(trayGlyphLayers(state), 16, 16 * scale)));
      written.push(file);
    }
  }
  writeFileSync(join(outDir, 'icon.png'), encodePng(rasterize(appIconLayers(), 1024, 1024, 2)));
  written.push('icon.png');
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = resolve(process.argv[2] ?? join(fileURLToPath(new URL('..', import.meta.url)), 'build'));
  for (const file of generateIcons(outDir)) console.log(join(outDir, file));
}
