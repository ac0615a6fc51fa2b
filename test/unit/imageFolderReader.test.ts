import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetDescription } from '../../engine/data/datasetDescription.js';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import { decodeImage, resizeInto } from '../../engine/wire/data/imageDecode.js';
import { isImageFolder, openImageFolder } from '../../engine/wire/data/imageFolder.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-images-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An RGBA image whose pixel (x, y) is f(x, y). */
function rgba(width: number, height: number, f: (x: number, y: number) => [number, number, number]): Buffer {
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
    const [r, g, b] = f(x, y);
    data.set([r, g, b, 255], (y * width + x) * 4);
  }
  return data;
}
function png(path: string, width: number, height: number, f: (x: number, y: number) => [number, number, number]): void {
  const img = new PNG({ width, height });
  rgba(width, height, f).copy(img.data);
  writeFileSync(path, PNG.sync.write(img));
}
function jpg(path: string, width: number, height: number, f: (x: number, y: number) => [number, number, number]): void {
  writeFileSync(path, jpeg.encode({ data: rgba(width, height, f), width, height }, 95).data);
}

const images = join(root, 'images');
const model = (h: number, w: number, c: number, classes = 3): ModelArrays => ({
  inputs: [{ name: 'img', shape: [h, w, c], dtype: 'float32' }],
  targets: [{ name: 'cls', shape: [], dtype: 'int32', range: [0, classes - 1] }],
});
const desc = (extra: Partial<DatasetDescription> = {}): DatasetDescription => ({ format: 'images', source: images, ...extra });

beforeAll(() => {
  for (const c of ['red', 'blue', 'green']) mkdirSync(join(images, c), { recursive: true });
  png(join(images, 'red', 'b.png'), 6, 4, () => [255, 0, 0]);
  png(join(images, 'red', 'a.png'), 3, 3, () => [200, 10, 10]);
  jpg(join(images, 'blue', 'x.jpg'), 8, 8, () => [0, 0, 250]);
  png(join(images, 'green', 'g.PNG'), 2, 2, () => [0, 255, 0]);
  writeFileSync(join(images, 'green', 'notes.txt'), 'not an image');
  tf.setBackend('cpu');
});

describe('image folder reader', () => {
  it('lists classes sorted by name and files sorted within a class, as image_dataset_from_directory', () => {
    expect(isImageFolder(images)).toBe(true);
    const data = openImageFolder(images, desc(), model(2, 2, 3), 1);
    expect(data.classes).toEqual({ cls: ['blue', 'green', 'red'] });
    expect(data.train.size).toBe(4);
    // blue/x.jpg, green/g.PNG, red/a.png, red/b.png
    expect([...data.train.gather(['cls'], [0, 1, 2, 3])]).toEqual([0, 1, 2, 2]);
    const px = data.train.gather(['img'], [3, 2, 1, 0]);
    expect([...px.slice(0, 3)]).toEqual([1, 0, 0]);
    expect(px[12]).toBeCloseTo(200 / 255, 6);
    expect([...px.slice(24, 27)]).toEqual([0, 1, 0]);
    // JPEG is lossy: the blue of the encoder's input, within a few levels.
    for (let i = 36; i < 48; i += 3) expect(Math.abs(px[i + 2] * 255 - 250)).toBeLessThan(4);
    data.close();
  });

  it('resizes bilinearly as tf.image.resizeBilinear with half-pixel centres, to gray or RGB, scaled or 0–255', () => {
    const path = join(root, 'gradient.png');
    png(path, 5, 3, (x, y) => [x * 60, y * 100, 255 - x * 40]);
    const img = decodeImage(path, Buffer.from(PNG.sync.write(Object.assign(new PNG({ width: 5, height: 3 }), { data: rgba(5, 3, (x, y) => [x * 60, y * 100, 255 - x * 40]) }))));
    for (const [h, w] of [[4, 8], [2, 3], [3, 5]]) {
      const out = new Float32Array(h * w * 3);
      resizeInto(img, h, w, 3, 1, out, 0);
      const rgb = tf.tensor3d(Float32Array.from({ length: 15 * 3 }, (_, i) => img.rgba[Math.floor(i / 3) * 4 + (i % 3)]), [3, 5, 3]);
      const want = tf.image.resizeBilinear(rgb, [h, w], false, true).dataSync();
      for (let i = 0; i < out.length; i++) expect(out[i]).toBeCloseTo(want[i], 3);
    }
    const gray = new Float32Array(1);
    resizeInto({ width: 1, height: 1, rgba: new Uint8Array([255, 255, 255, 255]) }, 1, 1, 1, 1 / 255, gray, 0);
    expect(gray[0]).toBeCloseTo(1, 3);
    const bytes = openImageFolder(images, desc({ preprocessing: { pixels: 'byte' } }), model(1, 1, 1), 1);
    expect(bytes.train.gather(['img'], [1])[0]).toBeCloseTo(0.587 * 255, 3);
    bytes.close();
  });

  it('one-hot labels and a seeded validation split', () => {
    const oneHot: ModelArrays = { inputs: [{ name: 'img', shape: [2, 2, 3], dtype: 'float32' }], targets: [{ name: 'cls', shape: [3], dtype: 'float32', range: [0, 1] }] };
    const data = openImageFolder(images, desc({ validationSplit: 0.25 }), oneHot, 3);
    expect([data.train.size, data.validation.size]).toEqual([3, 1]);
    const y = data.validation.gather(['cls'], [0]);
    expect([...y].reduce((a, b) => a + b, 0)).toBe(1);
    data.close();
  });

  it('refuses what would fail later: too many classes, not images, a corrupt file (named at the batch that reads it)', () => {
    expect(() => openImageFolder(images, desc(), model(2, 2, 3, 2), 1)).toThrow(/3 classes \("blue", "green", "red"\), but model output 'cls' has room for 2/);
    expect(() => openImageFolder(images, desc(), { ...model(2, 2, 3), inputs: [{ name: 'v', shape: [12], dtype: 'float32' }] }, 1)).toThrow(/model input 'v' takes shape \(12\), not images/);
    const bad = join(root, 'bad');
    mkdirSync(join(bad, 'a'), { recursive: true });
    writeFileSync(join(bad, 'a', 'fake.jpg'), 'hello');
    expect(() => openImageFolder(bad, { format: 'images', source: bad }, model(2, 2, 3), 1)).toThrow(/fake\.jpg: not a PNG or JPEG file/);
    const good = Buffer.from(PNG.sync.write(Object.assign(new PNG({ width: 4, height: 4 }), { data: rgba(4, 4, () => [1, 2, 3]) })));
    writeFileSync(join(bad, 'a', 'fake.jpg'), good.subarray(0, 40));
    const data = openImageFolder(bad, { format: 'images', source: bad }, model(2, 2, 3), 1);
    expect(() => data.train.gather(['img'], [0])).toThrow(/fake\.jpg: cannot decode this PNG .*corrupt or truncated/);
  });

  it('a root with train/ and val/ class folders is a split made by hand: val/ is the validation set, labelled by train/\'s classes', () => {
    const split = join(root, 'split');
    for (const [part, c, names] of [['train', 'cat', ['1', '2']], ['train', 'dog', ['3']], ['train', 'eel', ['4']], ['val', 'dog', ['5', '6']]] as const) {
      mkdirSync(join(split, part, c), { recursive: true });
      for (const n of names) png(join(split, part, c, `${n}.png`), 2, 2, () => [Number(n) * 10, 0, 0]);
    }
    expect(isImageFolder(split)).toBe(true);
    const data = openImageFolder(split, { format: 'images', source: split }, model(2, 2, 3), 1);
    expect(data.classes).toEqual({ cls: ['cat', 'dog', 'eel'] });
    expect([data.train.size, data.validation.size]).toEqual([4, 2]);
    expect([...data.validation.gather(['cls'], [0, 1])]).toEqual([1, 1]);
    expect(data.validation.gather(['img'], [1])[0]).toBeCloseTo(60 / 255, 5);
    expect(data.describe).toMatch(/train 4 from train\/, validation 2 from val\//);
    expect(() => openImageFolder(split, { format: 'images', source: split, validationSplit: 0.2 }, model(2, 2, 3), 1)).toThrow(/has its own validation folder .*drop the split/);
    mkdirSync(join(split, 'val', 'fox'));
    png(join(split, 'val', 'fox', 'f.png'), 2, 2, () => [0, 0, 0]);
    expect(() => openImageFolder(split, { format: 'images', source: split }, model(2, 2, 3), 1)).toThrow(/class folder "fox" is not among the training classes \(cat, dog, eel\)/);
  });
});
