/**
 * PNG and JPEG files to the pixels a model reads: decoded with pngjs and jpeg-js (pure JavaScript, so
 * they travel inside the agent bundle), resized with bilinear interpolation and half-pixel centres (as
 * tf.image.resize, which Keras's image_dataset_from_directory uses), converted to the model's channel
 * count (grayscale by ITU-R 601 luma, as tf.image.rgb_to_grayscale) and scaled.
 */
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

export interface Pixels { width: number; height: number; rgba: Uint8Array }

export type ImageKind = 'png' | 'jpeg';

/** The format a file's first bytes say it is, or null. */
export function imageKindOf(head: Uint8Array): ImageKind | null {
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) return 'png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  return null;
}

export function decodeImage(path: string, bytes: Buffer): Pixels {
  const kind = imageKindOf(bytes);
  try {
    if (kind === 'png') {
      const png = PNG.sync.read(bytes);
      return { width: png.width, height: png.height, rgba: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.byteLength) };
    }
    if (kind === 'jpeg') {
      const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 1024 });
      return { width: img.width, height: img.height, rgba: img.data };
    }
  } catch (err) {
    throw new Error(`${path}: cannot decode this ${kind === 'png' ? 'PNG' : 'JPEG'} (${(err as Error).message}). The file is corrupt or truncated: re-export it or remove it from the folder.`);
  }
  throw new Error(`${path}: not a PNG or JPEG file (by its first bytes). Convert it, or move it out of the class folder.`);
}

/**
 * Write `img` resized to height×width with `channels` (1, 3 or 4) at out[at..], row-major HWC, each
 * value multiplied by `scale` (1/255 for [0, 1]).
 */
export function resizeInto(img: Pixels, height: number, width: number, channels: number, scale: number, out: Float32Array, at: number): void {
  const { width: w, height: h, rgba } = img;
  const sy = h / height, sx = w / width;
  const px = new Float32Array(4);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), h - 1);
    const y0 = Math.floor(fy), y1 = Math.min(y0 + 1, h - 1), dy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), w - 1);
      const x0 = Math.floor(fx), x1 = Math.min(x0 + 1, w - 1), dx = fx - x0;
      const a = (y0 * w + x0) * 4, b = (y0 * w + x1) * 4, c = (y1 * w + x0) * 4, d = (y1 * w + x1) * 4;
      for (let k = 0; k < 4; k++) {
        const top = rgba[a + k] + (rgba[b + k] - rgba[a + k]) * dx;
        const bottom = rgba[c + k] + (rgba[d + k] - rgba[c + k]) * dx;
        px[k] = top + (bottom - top) * dy;
      }
      const o = at + (y * width + x) * channels;
      if (channels === 1) out[o] = (0.2989 * px[0] + 0.587 * px[1] + 0.114 * px[2]) * scale;
      else for (let k = 0; k < channels; k++) out[o + k] = px[k] * scale;
    }
  }
}
