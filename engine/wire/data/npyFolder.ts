/**
 * A dataset from a folder of NumPy files, checked against the model before anything runs.
 *
 * Layout: `x.npy` and `y.npy` when the model has one input and one output; otherwise one file per
 * input and output layer, `<layerName>.npy` (with '/' in layer names written as '__'). An optional
 * `val/` subfolder with the same files is the validation split; without it `validationSplit` holds out
 * the last rows, as model.fit does, or a seeded random fraction (heldOut.ts). Every mistake is reported with the file, what was expected, what was found
 * and how to fix it, because a shape error deep inside a pipeline stage would name none of these.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidationHoldOut } from '../../data/datasetDescription.js';
import { heldOutRows } from './heldOut.js';
import { type ArraySpec, type Dataset, type RowSource, emptySplit, rowSizeOf, splitOf } from './dataset.js';
import { type NpyArray, formatShape, openNpy } from './npy.js';

export interface NpyFolderWants {
  /** The model's input layers (name = layer name, shape without the batch dim; dims < 0 match any size). */
  inputs: ArraySpec[];
  /** The model's output layers (name = layer name, shape = what the loss expects per sample). */
  targets: ArraySpec[];
  /** The caller's extra check of a target file (e.g. one-hot vs class ids): a message, or null if fine. dtype is NumPy's name ('int64'), shape per sample. */
  checkTarget?: (name: string, dtype: string, shape: number[]) => string | null;
}

export interface NpyDataset extends Dataset {
  /** Smallest and largest value of an array over all its samples (train and validation), for label checks (a NaN is refused by the read, with its sample). */
  labelRange(name: string): ValueRange;
}

/** File name of a layer's array: '/' is not allowed in file names, so it becomes '__'. */
export function npyFileName(layerName: string): string {
  return `${layerName.replace(/\//g, '__')}.npy`;
}

/** An array's smallest and largest value, and where the first value that is not a whole number lies (row: 0-based sample). */
export interface ValueRange {
  min: number;
  max: number;
  firstNonInteger?: { path: string; row: number; value: number };
}

const isInteger = (dtype: string) => /^(u?int|bool)/.test(dtype);

/** [] and [1] are the same per-sample scalar; a negative model dim matches any size. */
function sameShape(want: readonly number[], found: readonly number[]): boolean {
  const scalar = (s: readonly number[]) => s.length === 0 || (s.length === 1 && s[0] === 1);
  if (scalar(want) && scalar(found)) return true;
  return want.length === found.length && want.every((d, i) => d < 0 || d === found[i]);
}

export interface Role { spec: ArraySpec; role: 'input' | 'target'; files: string[] }

export function openNpyFolder(dir: string, wants: NpyFolderWants, options: { validationSplit?: number; validationHoldOut?: ValidationHoldOut; seed: number }): NpyDataset {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`NumPy folder ${dir} does not exist or is not a folder. Pass the folder that holds x.npy and y.npy (or one <layer>.npy per model input and output).`);
  const single = wants.inputs.length === 1 && wants.targets.length === 1;
  const roles: Role[] = [
    ...wants.inputs.map((spec) => ({ spec, role: 'input' as const })),
    ...wants.targets.map((spec) => ({ spec, role: 'target' as const })),
  ].map((r) => ({ ...r, files: single ? [r.role === 'input' ? 'x.npy' : 'y.npy', npyFileName(r.spec.name)] : [npyFileName(r.spec.name)] }));
  const names = roles.map((r) => r.spec.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined) throw new Error(`NumPy folder ${dir}: the model has two arrays named '${dup}'; give its layers distinct names.`);

  const opened: NpyArray[] = [];
  const closeAll = () => opened.forEach((a) => a.close());
  try {
    const openSplit = (sub: string): Map<string, NpyArray> => {
      const folder = sub ? join(dir, sub) : dir;
      const arrays = new Map<string, NpyArray>();
      for (const r of roles) {
        const file = r.files.find((f) => existsSync(join(folder, f)));
        if (file === undefined) {
          const there = readdirSync(folder).filter((f) => f.endsWith('.npy')).sort();
          const expected = single ? 'x.npy and y.npy' : roles.map((q) => q.files[0]).join(', ');
          throw new Error(`NumPy folder ${folder}: no ${r.files.join(' or ')} for model ${r.role} '${r.spec.name}'. ` +
            `Expected ${expected}${single ? '' : ' (one file per model input and output layer, \'/\' in layer names written as \'__\')'}; ` +
            `found ${there.length ? there.join(', ') : 'no .npy files'}.`);
        }
        const arr = openNpy(join(folder, file));
        opened.push(arr);
        checkArray(arr, r, wants);
        arrays.set(r.spec.name, arr);
      }
      const counts = [...arrays.values()].map((a) => a.samples);
      if (counts.some((c) => c !== counts[0])) {
        const list = [...arrays.values()].map((a) => `${a.path}: ${a.samples}`).join(', ');
        throw new Error(`NumPy folder ${folder}: the files hold different numbers of samples (${list}); every file of a split needs the same first axis, one row per sample.`);
      }
      if (counts[0] === 0) throw new Error(`NumPy folder ${folder}: the files hold 0 samples. Save arrays whose first axis has at least one sample.`);
      return arrays;
    };

    const train = openSplit('');
    const trainFiles = [...train.values()];
    const total = trainFiles[0]?.samples ?? 0;
    const asSources = (m: Map<string, NpyArray>) => m as ReadonlyMap<string, RowSource>;
    const arrays: ArraySpec[] = roles.map((r) => {
      const a = train.get(r.spec.name)!;
      return { name: r.spec.name, shape: a.shape.slice(1), dtype: a.dtype };
    });
    const valDir = join(dir, 'val');
    const F = options.validationSplit;
    let dataset: Omit<NpyDataset, 'labelRange' | 'close'>;
    let val: Map<string, NpyArray> | undefined;
    if (existsSync(valDir) && statSync(valDir).isDirectory()) {
      val = openSplit('val');
      for (const r of roles) {
        const t = train.get(r.spec.name)!, v = val.get(r.spec.name)!;
        // Both already match the model; this catches sizes the model leaves open (dims < 0) differing.
        if (formatShape(t.shape.slice(1)) !== formatShape(v.shape.slice(1))) {
          throw new Error(`NumPy folder ${dir}: ${v.path} has per-sample shape ${formatShape(v.shape.slice(1))} but ${t.path} has ${formatShape(t.shape.slice(1))}; save both splits with the same per-sample shape.`);
        }
      }
      const size = [...val.values()][0].samples;
      dataset = {
        describe: `NumPy folder ${dir} (train ${total}, validation ${size} from val/)`,
        arrays,
        train: splitOf(`${dir} train`, total, asSources(train)),
        validation: splitOf(`${dir} validation`, size, asSources(val)),
      };
    } else if (F !== undefined && F !== 0) {
      const { trainRows, valRows, note } = heldOutRows(`NumPy folder ${dir}`, total, F, options.validationHoldOut ?? 'last', options.seed);
      dataset = {
        describe: `NumPy folder ${dir} (${note})`,
        arrays,
        train: splitOf(`${dir} train`, trainRows.length, asSources(train), trainRows),
        validation: splitOf(`${dir} validation`, valRows.length, asSources(train), valRows),
      };
    } else {
      dataset = {
        describe: `NumPy folder ${dir} (train ${total}, no validation)`,
        arrays,
        train: splitOf(`${dir} train`, total, asSources(train)),
        validation: emptySplit(`${dir} validation`, names),
      };
    }

    scanSmallFloats([...train.values(), ...(val?.values() ?? [])]);
    const ranges = new Map<string, ValueRange>();
    return {
      ...dataset,
      labelRange(name) {
        const cached = ranges.get(name);
        if (cached) return cached;
        const files = [train.get(name), val?.get(name)].filter((f): f is NpyArray => !!f);
        if (!files.length) throw new Error(`NumPy folder ${dir}: no array named '${name}' (it has ${names.map((n) => `'${n}'`).join(', ')}).`);
        const range = scanRange(files);
        ranges.set(name, range);
        return range;
      },
      close: closeAll,
    };
  } catch (err) {
    closeAll();
    throw err;
  }
}

/** Check one file against the model layer it feeds or is compared with. */
export function checkArray(arr: NpyArray, r: Role, wants: NpyFolderWants): void {
  const found = arr.shape.slice(1);
  const layer = `model ${r.role} '${r.spec.name}'`;
  if (!sameShape(r.spec.shape, found)) {
    const want = r.spec.shape.map((d) => (d < 0 ? 'any' : d));
    const fix = r.spec.shape.every((d) => d >= 0) && arr.rowSize === rowSizeOf(r.spec.shape)
      ? ` Same number of values per sample, so reshape before saving: np.save(path, x.reshape(len(x), ${r.spec.shape.join(', ') || 1})).`
      : ' Save an array of shape (samples, ' + want.join(', ') + ') for this layer.';
    throw new Error(`${arr.path}: each sample has shape ${formatShape(found)} (file shape ${formatShape(arr.shape)}), but ${layer} expects ${formatShape(r.spec.shape)}.${fix}`);
  }
  if (r.role === 'input' && r.spec.dtype === 'int32' && !isInteger(arr.dtype)) {
    throw new Error(`${arr.path}: dtype '${arr.dtype}', but ${layer} takes integer ids (int32). Save them as integers: np.save(path, x.astype(np.int32)).`);
  }
  if (r.role === 'target' && wants.checkTarget) {
    const problem = wants.checkTarget(r.spec.name, arr.dtype, found);
    if (problem) throw new Error(`${arr.path} (${layer}, shape ${formatShape(arr.shape)}, dtype '${arr.dtype}'): ${problem}`);
  }
}

/**
 * Float arrays up to this size are read through once when the data is opened, so a NaN or infinity is
 * named (file, sample) before anything trains; bigger ones (a 10 GB dataset would take a minute on
 * every start) are checked by each read, which fails the step that meets one.
 */
const FINITE_SCAN_BYTES = 256 * 2 ** 20;

/** Read the float arrays of at most FINITE_SCAN_BYTES through: the reader refuses a value that is not finite. */
export function scanSmallFloats(files: Iterable<NpyArray>): void {
  const small = [...files].filter((f) => f.dtype.startsWith('float') && f.samples * f.rowSize * Number(f.descr.slice(2)) <= FINITE_SCAN_BYTES);
  if (small.length) scanRange(small);
}

/** Min and max over whole files (and the first value that is not whole), streamed in fixed-size chunks so memory stays bounded. */
export function scanRange(files: NpyArray[]): ValueRange {
  let min = Infinity, max = -Infinity;
  let firstNonInteger: ValueRange['firstNonInteger'];
  for (const f of files) {
    const rows = Math.max(1, Math.floor((1 << 16) / Math.max(1, f.rowSize)));
    const buf = new Float32Array(rows * f.rowSize);
    for (let start = 0; start < f.samples; start += rows) {
      const count = Math.min(rows, f.samples - start);
      f.readRange(start, count, buf);
      for (let i = 0; i < count * f.rowSize; i++) {
        const v = buf[i];
        if (v < min) min = v;
        if (v > max) max = v;
        if (firstNonInteger === undefined && !Number.isInteger(v)) firstNonInteger = { path: f.path, row: start + Math.floor(i / f.rowSize), value: v };
      }
    }
  }
  return { min, max, ...(firstNonInteger ? { firstNonInteger } : {}) };
}
