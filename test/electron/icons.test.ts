import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRAY_STATES } from '../../electron/main/tray-state';
import { generateIcons, trayImageName } from '../../scripts/generate-icons';
import { TRAY_GLYPH_STATES } from '../../scripts/icons/icon-designs';
import { encodePng } from '../../scripts/icons/png-encoder';
import { decodePng } from '../support/electron/png-decode';

const root = join(import.meta.dirname, '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'exobar-icons-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('PNG encoder', () => {
  it('round-trips pixels through a strict decoder', () => {
    const data = new Uint8Array(3 * 2 * 4).map((_, i) => (i * 37) % 256);
    const decoded = decodePng(encodePng({ width: 3, height: 2, data }));
    expect(decoded.width).toBe(3);
    expect(decoded.height).toBe(2);
    expect(Array.from(decoded.data)).toEqual(Array.from(data));
  });

  it('refuses data of the wrong size', () => {
    expect(() => encodePng({ width: 2, height: 2, data: new Uint8Array(3) })).toThrow(/expected 16 bytes/);
  });
});

describe('build/ images', () => {
  const written = generateIcons(scratch);

  it('has one glyph per tray state', () => {
    expect([...TRAY_GLYPH_STATES].sort()).toEqual([...TRAY_STATES].sort());
  });

  it('matches what the committed script generates (regenerate with scripts/generate-icons.ts)', () => {
    for (const file of written) {
      expect(readFileSync(join(root, 'build', file)).equals(readFileSync(join(scratch, file))), file).toBe(true);
    }
  });

  it('tray images are 16 px and 32 px @2x template images: black plus alpha, names ending in Template', () => {
    for (const state of TRAY_STATES) {
      for (const scale of [1, 2] as const) {
        const name = trayImageName(state, scale);
        expect(name).toMatch(/Template(@2x)?\.png$/);
        const image = decodePng(readFileSync(join(root, 'build', 'tray', name)));
        expect(image.width).toBe(16 * scale);
        expect(image.height).toBe(16 * scale);
        let opaque = 0;
        for (let i = 0; i < image.data.length; i += 4) {
          expect(image.data[i] === 0 && image.data[i + 1] === 0 && image.data[i + 2] === 0).toBe(true);
          if (image.data[i + 3]! > 200) opaque++;
        }
        expect(opaque).toBeGreaterThan(10 * scale * scale);
      }
    }
  });

  it('the glyphs differ from one another', () => {
    const bodies = TRAY_STATES.map((s) => readFileSync(join(root, 'build', 'tray', trayImageName(s, 2))).toString('hex'));
    expect(new Set(bodies).size).toBe(TRAY_STATES.length);
  });

  it('the app icon is 1024 px, large enough for electron-builder to make icon.icns', () => {
    const icon = decodePng(readFileSync(join(root, 'build', 'icon.png')));
    expect(icon.width).toBe(1024);
    expect(icon.height).toBe(1024);
  });
});
