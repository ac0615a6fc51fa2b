/**
 * A folder of images sorted into class folders, `root/<class>/*.png|jpg`, as Keras's
 * image_dataset_from_directory reads it: classes sorted by name are the label ids, files sorted by name
 * within a class. A root holding `train/` and `val/` (or `validation/`), each with the class folders,
 * is a split made by hand: `val/` is the validation set and its classes must be among `train/`'s. Each image is decoded when a batch asks for it, resized to the model's input and
 * scaled to [0, 1] (or kept 0–255 with `"pixels": "byte"`). Before anything trains every file's first
 * bytes are checked (PNG or JPEG) and the class count against the model's output.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DatasetDescription } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import { type Dataset, type RowSource, rowSizeOf, splitOf } from './dataset.js';
import { decodeImage, imageKindOf, resizeInto } from './imageDecode.js';
import { heldOutSplits } from './heldOut.js';
import { normalizer } from './feeds.js';
import { targetEncoding } from './targetEncoding.js';
import { ValueStatsBuilder } from './valueStats.js';

const IMAGE = /\.(png|jpe?g)$/i;

export interface ImageFolderDataset extends Dataset {
  /** The class names by label id, under the model output's name. */
  classes: Record<string, string[]>;
}

/** Whether a folder looks like class folders of images, or `train/` of them (as opposed to a folder of .npy files). */
export function isImageFolder(dir: string): boolean {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
  const subdirs = subfolders(dir);
  return subdirs.some((d) => readdirSync(join(dir, d)).some((f) => IMAGE.test(f))) || (subdirs.includes('train') && isImageFolder(join(dir, 'train')));
}

/**
 * The class folders of a folder that looks like an image folder not yet filled: folders, no .npy files
 * beside them, and not one .png or .jpg in any of them. Empty otherwise (a NumPy folder, an image folder).
 */
export function emptyClassFolders(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory() || isImageFolder(dir)) return [];
  if (readdirSync(dir).some((f) => /\.npy$/i.test(f))) return [];
  return subfolders(dir);
}

export function openImageFolder(dir: string, description: DatasetDescription, arrays: ModelArrays, seed: number): ImageFolderDataset {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`Image folder ${dir} does not exist or is not a folder. Pass the folder that holds one subfolder of images per class.`);
  if (arrays.inputs.length !== 1 || arrays.targets.length !== 1) {
    throw new Error(`Image folder ${dir}: images feed a model with one input and one output; this model has ${arrays.inputs.length} inputs and ${arrays.targets.length} outputs.`);
  }
  const input = arrays.inputs[0], target = arrays.targets[0];
  const valDir = VALIDATION_FOLDERS.map((name) => join(dir, name)).find((d) => isImageFolder(d));
  const trainDir = valDir && isImageFolder(join(dir, 'train')) ? join(dir, 'train') : dir;
  const classes = subfolders(trainDir);
  if (!classes.length) throw new Error(`Image folder ${dir}: no class folders. Lay it out as ${dir}/<class name>/<image>.png (or .jpg), one folder per class.`);
  const { files, labels } = imagesOf(trainDir, classes, classes);
  if (!files.length) throw new Error(`Image folder ${trainDir}: the class folders (${classes.join(', ')}) hold no .png or .jpg files.`);
  const held = trainDir !== dir ? imagesOf(valDir!, subfolders(valDir!), classes) : null;
  if (held && description.validationSplit !== undefined) throw new Error(`Image folder ${dir}: it has its own validation folder (${valDir}), so a validation split of ${description.validationSplit} would hold out a second set; drop the split, or merge ${valDir} into train/.`);
  const head = Buffer.alloc(4);
  for (const f of [...files, ...(held?.files ?? [])]) {
    const fd = openSync(f, 'r');
    try {
      if (readSync(fd, head, 0, 4, 0) < 4 || !imageKindOf(head)) throw new Error(`${f}: not a PNG or JPEG file (by its first bytes), though its name says so. Re-export it or remove it.`);
    } finally {
      closeSync(fd);
    }
  }

  const shape = input.shape;
  const imageSize = description.preprocessing?.imageSize;
  if (shape.length !== 3 || ![1, 3, 4].includes(shape[2])) {
    throw new Error(`Image folder ${dir}: model input '${input.name}' takes shape (${shape.join(', ')}), not images (height, width, channels 1, 3 or 4).`);
  }
  const [height, width] = [shape[0] >= 0 ? shape[0] : imageSize?.[0], shape[1] >= 0 ? shape[1] : imageSize?.[1]];
  if (height === undefined || width === undefined) throw new Error(`Image folder ${dir}: model input '${input.name}' takes images of any size; give "imageSize": [height, width] in a dataset.json's preprocessing.`);
  if (imageSize && (imageSize[0] !== height || imageSize[1] !== width)) throw new Error(`Image folder ${dir}: preprocessing.imageSize is ${imageSize.join('×')} but model input '${input.name}' takes ${height}×${width}.`);
  const channels = shape[2];
  const scale = description.preprocessing?.pixels === 'byte' ? 1 : 1 / 255;
  const norm = normalizer(dir, description.preprocessing?.normalize, channels);

  // Labels are the class ids; their "stats" are the class names, so the one encoding rule applies.
  const units = rowSizeOf(target.shape);
  const count = units > 1 ? units : target.range ? target.range[1] - target.range[0] + 1 : undefined;
  if (count !== undefined && classes.length > count) throw new Error(`Image folder ${dir}: ${classes.length} classes (${classes.map((c) => `"${c}"`).join(', ')}), but model output '${target.name}' has room for ${count}. Give the last layer ${classes.length} units.`);
  const stats = new ValueStatsBuilder();
  classes.forEach((c, k) => stats.add(String(k), k));
  const enc = targetEncoding(target, stats.finish(), `Image folder ${dir}`, description.preprocessing?.labels, 'class');

  const sources = (paths: string[], ids: number[]): Map<string, RowSource> => {
    const pixels: RowSource = {
      rowSize: height * width * channels,
      readRows(rows, out, offset, stride) {
        for (let r = 0; r < rows.length; r++) {
          const path = paths[rows[r]];
          let bytes: Buffer;
          try { bytes = readFileSync(path); } catch (err) { throw new Error(`${path}: cannot read (${(err as Error).message}); was it moved under the run? Put it back and resume.`); }
          const at = offset + r * stride;
          resizeInto(decodeImage(path, bytes), height, width, channels, scale, out, at);
          if (norm) for (let i = 0; i < height * width * channels; i++) out[at + i] = norm(out[at + i], i % channels);
        }
      },
    };
    const label: RowSource = {
      rowSize: enc.rowSize,
      readRows(rows, out, offset, stride) {
        for (let r = 0; r < rows.length; r++) enc.write(ids[rows[r]], out, offset + r * stride, () => paths[rows[r]]);
      },
    };
    return new Map([[input.name, pixels], [target.name, label]]);
  };
  // Class folders list the files class by class: the last rows would be the last classes only, so a
  // folder's split is seeded random by default, as Keras's image_dataset_from_directory shuffles
  // with its seed before it splits.
  const splits = held
    ? { train: splitOf(`${trainDir} train`, files.length, sources(files, labels)), validation: splitOf(`${valDir} validation`, held.files.length, sources(held.files, held.labels)), note: `train ${files.length} from train/, validation ${held.files.length} from ${valDir!.slice(dir.length + 1)}/` }
    : heldOutSplits(`Image folder ${dir}`, files.length, sources(files, labels), description.validationSplit, seed, description.validationHoldOut ?? 'seededRandom');
  const perClass = classes.map((c, k) => `${c} ${labels.filter((l) => l === k).length}`).join(', ');
  return {
    describe: `image folder ${dir} (${splits.note}; ${classes.length} classes: ${perClass}; ${height}×${width}×${channels}, pixels ${scale === 1 ? '0–255' : '0–1'})`,
    arrays: [{ name: input.name, shape: [height, width, channels], dtype: 'float32' }, { name: target.name, shape: target.shape, dtype: target.dtype }],
    train: splits.train,
    validation: splits.validation,
    classes: { [target.name]: classes },
    close: () => undefined,
  };
}

/** The folders a hand-made validation split may be called, beside `train/`. */
const VALIDATION_FOLDERS = ['val', 'validation'];

function subfolders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

/** The images of `dir`'s class folders `present`, labelled by their index in `classes` (train's, sorted). */
function imagesOf(dir: string, present: string[], classes: string[]): { files: string[]; labels: number[] } {
  const files: string[] = [];
  const labels: number[] = [];
  for (const name of present) {
    const k = classes.indexOf(name);
    if (k < 0) throw new Error(`Image folder ${dir}: class folder "${name}" is not among the training classes (${classes.join(', ')}); rename it to one of them or add it to train/.`);
    for (const f of readdirSync(join(dir, name)).filter((f) => IMAGE.test(f) && !f.startsWith('.')).sort()) {
      files.push(join(dir, name, f));
      labels.push(k);
    }
  }
  return { files, labels };
}
