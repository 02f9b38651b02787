/**
 * A minimal PNG encoder (8-bit RGBA, no interlace) on Node's zlib.
 *
 * Hand-written because the repo has no image library (no sharp, no pngjs) and the
 * icons must be reproducible from a committed script: PNG is only a signature,
 * three chunks and a deflate stream, which zlib already provides.
 */
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An RGBA image, row-major, 4 bytes per pixel, not premultiplied. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData) >>> 0, 0);
  return Buffer.concat([length, typeAndData, crc]);
}

/** Encodes an RGBA image as PNG bytes; deterministic for a given image. */
export function encodePng(image: RgbaImage): Buffer {
  const { width, height, data } = image;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new Error(`encodePng: width and height must be positive integers, got ${width}x${height}`);
  }
  if (data.length !== width * height * 4) {
    throw new Error(`encodePng: expected ${width * height * 4} bytes of RGBA data, got ${data.length}`);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // colour type: truecolour with alpha
  header[10] = 0; // compression: deflate
  header[11] = 0; // filter method 0
  header[12] = 0; // no interlace

  // Every scanline starts with its filter type; 0 (none) keeps the encoder trivial.
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0;
    Buffer.from(data.buffer, data.byteOffset + y * stride, stride).copy(raw, y * (stride + 1) + 1);
  }
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}
