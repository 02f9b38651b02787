/**
 * Shapes as inside-tests in a resolution-independent unit space, rasterised with
 * supersampling so the same drawing gives crisp 16 px and 32 px (@2x) images.
 */
import type { RgbaImage } from './png-encoder';

/** True when the point (in the drawing's units) is inside the shape. */
export type Shape = (x: number, y: number) => boolean;

export const circle =
  (cx: number, cy: number, r: number): Shape =>
  (x, y) =>
    (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

export const ring = (cx: number, cy: number, outer: number, inner: number): Shape => difference(circle(cx, cy, outer), circle(cx, cy, inner));

export const rect =
  (x0: number, y0: number, x1: number, y1: number): Shape =>
  (x, y) =>
    x >= x0 && x <= x1 && y >= y0 && y <= y1;

export const roundedRect =
  (x0: number, y0: number, x1: number, y1: number, r: number): Shape =>
  (x, y) => {
    if (x < x0 || x > x1 || y < y0 || y > y1) return false;
    const dx = Math.max(x0 + r - x, 0, x - (x1 - r));
    const dy = Math.max(y0 + r - y, 0, y - (y1 - r));
    return dx * dx + dy * dy <= r * r;
  };

/** A bar of the given width from (x0,y0) to (x1,y1), round-capped. */
export const segment =
  (x0: number, y0: number, x1: number, y1: number, width: number): Shape =>
  (x, y) => {
    const vx = x1 - x0;
    const vy = y1 - y0;
    const t = Math.max(0, Math.min(1, ((x - x0) * vx + (y - y0) * vy) / (vx * vx + vy * vy)));
    const px = x0 + t * vx - x;
    const py = y0 + t * vy - y;
    return px * px + py * py <= (width / 2) ** 2;
  };

/** Filled triangle (any winding). */
export const triangle =
  (ax: number, ay: number, bx: number, by: number, cx: number, cy: number): Shape =>
  (x, y) => {
    const d1 = (x - bx) * (ay - by) - (ax - bx) * (y - by);
    const d2 = (x - cx) * (by - cy) - (bx - cx) * (y - cy);
    const d3 = (x - ax) * (cy - ay) - (cx - ax) * (y - ay);
    const hasNeg = d1 < 0 || d2 < 0 || d3 < 0;
    const hasPos = d1 > 0 || d2 > 0 || d3 > 0;
    return !(hasNeg && hasPos);
  };

export const union =
  (...shapes: Shape[]): Shape =>
  (x, y) =>
    shapes.some((s) => s(x, y));

export const intersection =
  (...shapes: Shape[]): Shape =>
  (x, y) =>
    shapes.every((s) => s(x, y));

export const difference =
  (base: Shape, ...holes: Shape[]): Shape =>
  (x, y) =>
    base(x, y) && !holes.some((h) => h(x, y));

export type Rgb = [number, number, number];

/** One layer: a shape painted with a colour that may vary with position. */
export interface Layer {
  shape: Shape;
  color: Rgb | ((x: number, y: number) => Rgb);
  opacity?: number;
}

/**
 * Rasterises layers (painted in order, source-over) on a transparent canvas.
 * `units` is the drawing's size; the image is `pixels` wide and high.
 */
export function rasterize(layers: Layer[], units: number, pixels: number, samples = 5): RgbaImage {
  const data = new Uint8Array(pixels * pixels * 4);
  const scale = units / pixels;
  for (let py = 0; py < pixels; py++) {
    for (let px = 0; px < pixels; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (const layer of layers) {
        let covered = 0;
        let cr = 0;
        let cg = 0;
        let cb = 0;
        for (let sy = 0; sy < samples; sy++) {
          for (let sx = 0; sx < samples; sx++) {
            const x = (px + (sx + 0.5) / samples) * scale;
            const y = (py + (sy + 0.5) / samples) * scale;
            if (!layer.shape(x, y)) continue;
            covered++;
            const c = typeof layer.color === 'function' ? layer.color(x, y) : layer.color;
            cr += c[0];
            cg += c[1];
            cb += c[2];
          }
        }
        if (covered === 0) continue;
        const la = (covered / (samples * samples)) * (layer.opacity ?? 1);
        const [lr, lg, lb] = [cr / covered, cg / covered, cb / covered];
        // Source-over in straight alpha.
        const outA = la + a * (1 - la);
        r = (lr * la + r * a * (1 - la)) / outA;
        g = (lg * la + g * a * (1 - la)) / outA;
        b = (lb * la + b * a * (1 - la)) / outA;
        a = outA;
      }
      const i = (py * pixels + px) * 4;
      data[i] = Math.round(r);
      data[i + 1] = Math.round(g);
      data[i + 2] = Math.round(b);
      data[i + 3] = Math.round(a * 255);
    }
  }
  return { width: pixels, height: pixels, data };
}
