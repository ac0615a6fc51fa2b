import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { PNG } from 'pngjs';
import type { DatasetFormat } from '../data/datasetDescription.js';
import type { ModelArrays } from '../data/modelArrays.js';
import type { ClassBalance, DatasetSamples } from '../protocol/datasetInspect.js';
import { parseRecord } from '../wire/data/csvRecord.js';
import { rowSizeOf, type Dataset } from '../wire/data/dataset.js';
import { decodeImage, resizeInto } from '../wire/data/imageDecode.js';

/**
 * What the Data section shows of a dataset besides its counts: a few samples (thumbnails of images,
 * the first rows of a table or JSON Lines file) and the class balance. Every read here is bounded —
 * the head of a file, a handful of images, the labels of at most MAX_COUNTED samples — so a large
 * dataset is inspected as fast as a small one.
 */
const HEAD_BYTES = 64 * 1024;
const TABLE_ROWS = 10;
const THUMBNAILS = 8;
const THUMBNAIL_PX = 64;
/** Images larger than this are not decoded for a thumbnail. */
const MAX_THUMBNAIL_SOURCE_BYTES = 16 * 1024 * 1024;
const MAX_CELL = 40;
const MAX_LIST = 8;
export const MAX_COUNTED = 200_000;
const IMAGE = /\.(png|jpe?g)$/i;

/** The head of a table or JSON Lines file: its column names and first rows, model-free. */
export function previewFile(path: string, format: DatasetFormat): { columns: string[]; samples: DatasetSamples } {
  if (format !== 'csv' && format !== 'tsv' && format !== 'jsonl') return { columns: [], samples: { kind: 'none' } };
  const lines = headLines(path);
  if (format === 'jsonl') {
    const objects = lines.slice(0, TABLE_ROWS).flatMap((line) => {
      try {
        const v: unknown = JSON.parse(line);
        return typeof v === 'object' && v !== null && !Array.isArray(v) ? [v as Record<string, unknown>] : [];
      } catch {
        return [];
      }
    });
    const columns = [...new Set(objects.flatMap((o) => Object.keys(o)))];
    return { columns, samples: { kind: 'table', columns, rows: objects.map((o) => columns.map((c) => cell(o[c]))) } };
  }
  const delimiter = format === 'tsv' ? '\t' : ',';
  const [head = '', ...rest] = lines;
  const columns = parseRecord(head, delimiter).map((c) => c.trim());
  const rows = rest.slice(0, TABLE_ROWS).map((line) => parseRecord(line, delimiter).map((v) => truncate(v)));
  return { columns, samples: { kind: 'table', columns, rows } };
}

/** Whole lines of the file's first HEAD_BYTES (the last, maybe cut, line dropped when more follows). */
function headLines(path: string): string[] {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const read = readSync(fd, buffer, 0, HEAD_BYTES, 0);
    const text = buffer.subarray(0, read).toString('utf8').replace(/^\uFEFF/, '');
    const lines = text.split(/\r?\n/);
    if (read === HEAD_BYTES) lines.pop();
    return lines.filter((l) => l.trim() !== '');
  } finally {
    closeSync(fd);
  }
}

function truncate(text: string): string {
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/** A JSON value as a short cell: lists (token ids) cut after MAX_LIST items. */
function cell(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_LIST).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
    return `[${shown}${value.length > MAX_LIST ? `, … ${value.length} in all` : ''}]`;
  }
  return truncate(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Class folders of an image folder and their files (names sorted, as the reader orders them). */
export function imageClasses(dir: string): Array<{ name: string; files: string[] }> {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .map((name) => ({ name, files: readdirSync(join(dir, name)).filter((f) => IMAGE.test(f) && !f.startsWith('.')).sort().map((f) => join(dir, name, f)) }));
}

/** Per-class file counts of an image folder (no image is opened). */
export function imageFolderBalance(dir: string, output: string): ClassBalance[] {
  const classes = imageClasses(dir);
  if (!classes.length) return [];
  const counts = classes.map((c) => c.files.length);
  return [{ output, names: classes.map((c) => c.name), counts, counted: counts.reduce((a, b) => a + b, 0) }];
}

/**
 * Up to THUMBNAILS images, taken from the classes in turn so every class shows, each scaled to at most
 * THUMBNAIL_PX a side as a PNG data URL. A file that cannot be decoded is skipped (the reader reports it).
 */
export function imageThumbnails(dir: string): DatasetSamples {
  const classes = imageClasses(dir);
  const picked: Array<{ label: string; file: string }> = [];
  for (let i = 0; picked.length < THUMBNAILS && classes.some((c) => c.files.length > i); i++) {
    for (const c of classes) if (i < c.files.length && picked.length < THUMBNAILS) picked.push({ label: c.name, file: c.files[i] });
  }
  const images = picked.flatMap(({ label, file }) => {
    try {
      if (statSync(file).size > MAX_THUMBNAIL_SOURCE_BYTES) return [];
      const img = decodeImage(file, readFileSync(file));
      const scale = Math.min(1, THUMBNAIL_PX / Math.max(img.width, img.height));
      const width = Math.max(1, Math.round(img.width * scale)), height = Math.max(1, Math.round(img.height * scale));
      const out = new Float32Array(width * height * 4);
      resizeInto(img, height, width, 4, 1, out, 0);
      return [{ label, file: basename(file), width, height, dataUrl: pngDataUrl(width, height, out) }];
    } catch {
      return [];
    }
  });
  return { kind: 'images', images };
}

function pngDataUrl(width: number, height: number, rgba: ArrayLike<number>): string {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height * 4; i++) png.data[i] = Math.max(0, Math.min(255, Math.round(rgba[i])));
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

/**
 * The first samples of an opened dataset as a table, one column per array: arrays of NumPy files
 * and .npz archives, whose heads a text preview cannot show.
 */
export function arrayRows(dataset: Dataset): DatasetSamples {
  const n = Math.min(TABLE_ROWS, dataset.train.size);
  const names = dataset.arrays.map((a) => a.name);
  const sizes = dataset.arrays.map((a) => rowSizeOf(a.shape));
  const stride = sizes.reduce((a, b) => a + b, 0);
  const values = dataset.train.gather(names, Array.from({ length: n }, (_, i) => i));
  const rows = Array.from({ length: n }, (_, r) => {
    let at = r * stride;
    return sizes.map((size) => {
      const row = Array.from(values.subarray(at, at + size));
      at += size;
      return size === 1 ? String(round(row[0])) : cell(row.map(round));
    });
  });
  return { kind: 'table', columns: names, rows };
}

const round = (v: number) => Math.round(v * 1e4) / 1e4;

/**
 * Thumbnails of the first samples of an array that holds images (height, width and 1, 3 or 4
 * channels, at least 4×4), each scaled from its own min–max to 0–255, labelled with its class where
 * the first target is one; null when no input is image-shaped.
 */
export function arrayImages(dataset: Dataset, arrays: ModelArrays): DatasetSamples | null {
  const image = dataset.arrays.find((a) => arrays.inputs.some((i) => i.name === a.name) && a.shape.length === 3 && a.shape[0] >= 4 && a.shape[1] >= 4 && [1, 3, 4].includes(a.shape[2]));
  if (!image) return null;
  const [height, width, channels] = image.shape;
  const target = dataset.arrays.find((a) => a.name === arrays.targets[0]?.name);
  const labelSize = target ? rowSizeOf(target.shape) : 0;
  const n = Math.min(THUMBNAILS, dataset.train.size);
  const values = dataset.train.gather(target ? [image.name, target.name] : [image.name], Array.from({ length: n }, (_, i) => i));
  const stride = height * width * channels + labelSize;
  const names = target ? dataset.classes?.[target.name] : undefined;
  const images = Array.from({ length: n }, (_, r) => {
    const pixels = values.subarray(r * stride, r * stride + height * width * channels);
    let lo = Infinity, hi = -Infinity;
    for (const v of pixels) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    const k = hi > lo ? 255 / (hi - lo) : 0;
    const rgba = new Uint8Array(height * width * 4);
    for (let p = 0; p < height * width; p++) {
      for (let c = 0; c < 3; c++) rgba[p * 4 + c] = Math.round((pixels[p * channels + (channels === 1 ? 0 : c)] - lo) * k);
      rgba[p * 4 + 3] = channels === 4 ? Math.round((pixels[p * 4 + 3] - lo) * k) : 255;
    }
    const label = labelOf(values.subarray(r * stride + height * width * channels, (r + 1) * stride), names);
    const scale = Math.min(1, THUMBNAIL_PX / Math.max(width, height));
    const w = Math.max(1, Math.round(width * scale)), h = Math.max(1, Math.round(height * scale));
    const out = new Float32Array(w * h * 4);
    resizeInto({ width, height, rgba }, h, w, 4, 1, out, 0);
    return { label, file: `sample ${r + 1}`, width: w, height: h, dataUrl: pngDataUrl(w, h, out) };
  });
  return { kind: 'images', images };
}

/** A target row as a class name (a class id, or the largest of a one-hot row), else its value(s). */
function labelOf(row: Float32Array, names: string[] | undefined): string {
  if (!row.length) return '';
  let id = 0;
  if (row.length > 1) for (let j = 1; j < row.length; j++) if (row[j] > row[id]) id = j;
  const value = row.length > 1 ? id : row[0];
  return Number.isInteger(value) ? (names?.[value] ?? String(value)) : String(round(value));
}

/**
 * Class counts of each output whose targets are classes (class ids, one-hot rows, binary labels), over
 * the training then validation samples, at most MAX_COUNTED of them. Only the label arrays are read
 * (an image folder's labels come from its folder names, no image is decoded).
 */
export function classBalance(dataset: Dataset, arrays: ModelArrays): ClassBalance[] {
  return arrays.targets.flatMap((target): ClassBalance[] => {
    const spec = dataset.arrays.find((a) => a.name === target.name);
    if (!target.range || !spec) return [];
    const width = rowSizeOf(spec.shape);
    const oneHot = width > 1;
    const binary = !oneHot && target.dtype !== 'int32';
    if (oneHot && target.shape.length !== 1) return [];
    if (!oneHot && spec.shape.length > 0) return [];
    const k = oneHot ? width : binary ? 2 : target.range[1] + 1;
    if (k > 10_000) return [];
    const counts = new Array<number>(k).fill(0);
    let counted = 0;
    for (const split of [dataset.train, dataset.validation]) {
      for (let start = 0; start < split.size && counted < MAX_COUNTED; start += 4096) {
        const n = Math.min(4096, split.size - start, MAX_COUNTED - counted);
        const values = split.gather([target.name], Array.from({ length: n }, (_, i) => start + i));
        for (let r = 0; r < n; r++) {
          let id: number;
          if (oneHot) {
            id = 0;
            for (let j = 1; j < width; j++) if (values[r * width + j] > values[r * width + id]) id = j;
          } else id = Math.round(values[r]);
          if (id >= 0 && id < k) counts[id]++;
        }
        counted += n;
      }
    }
    const named = dataset.classes?.[target.name];
    const names = counts.map((_, i) => named?.[i] ?? String(i));
    return [{ output: target.name, names, counts, counted }];
  });
}
