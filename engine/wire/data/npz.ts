/**
 * A NumPy `.npz` archive (np.savez / np.savez_compressed) as a dataset. Arrays: `x` and `y` (or
 * Keras's `x_train`/`y_train`) for a model with one input and one output, else one per input and output
 * layer by its name, or what a dataset.json's `"array"` names; `x_val`/`y_val` (or `x_test`/`y_test`)
 * are the validation split unless a validationSplit is given. Stored members (np.savez) are read in
 * place, row by row, like a .npy; compressed members are inflated once into a temp file first.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetDescription } from '../../data/datasetDescription.js';
import type { ModelArrays } from '../../data/modelArrays.js';
import { type ArraySpec, type Dataset, type RowSource } from './dataset.js';
import { pairFeeds } from './feeds.js';
import { heldOutSplits } from './heldOut.js';
import { type NpyArray, openNpy } from './npy.js';
import { checkArray, scanRange, scanSmallFloats } from './npyFolder.js';
import { splitOf } from './dataset.js';
import { inflateMember, readZipDirectory, type ZipMember } from './zipDirectory.js';

export function openNpz(path: string, description: DatasetDescription, arrays: ModelArrays, seed: number): Dataset {
  if (!existsSync(path)) throw new Error(`${path} does not exist. Pass the .npz file np.savez wrote.`);
  const members = new Map(readZipDirectory(path).filter((m) => m.name.endsWith('.npy')).map((m) => [m.name.slice(0, -4), m]));
  const listed = [...members.keys()].map((n) => `'${n}'`).join(', ') || 'no arrays';
  const single = arrays.inputs.length === 1 && arrays.targets.length === 1;
  const candidates = (role: 'input' | 'target', name: string): string[] =>
    single ? (role === 'input' ? ['x', 'x_train', name] : ['y', 'y_train', name]) : [name, name.replace(/\//g, '__')];
  const pick = (role: 'input' | 'target') => (a: { name: string }) => {
    const found = candidates(role, a.name).find((n) => members.has(n));
    return found === undefined ? `no array for model ${role} '${a.name}': expected ${candidates(role, a.name).map((n) => `'${n}'`).join(' or ')}; the archive holds ${listed}.` : { array: found };
  };
  const inputs = pairFeeds(path, 'inputs', description.inputs, arrays.inputs, pick('input'));
  const targets = pairFeeds(path, 'outputs', description.outputs, arrays.targets, pick('target'));
  const roles = [...inputs.map((p) => ({ ...p, role: 'input' as const })), ...targets.map((p) => ({ ...p, role: 'target' as const }))];

  const opened: NpyArray[] = [];
  const open = (name: string): NpyArray => {
    const m = members.get(name);
    if (!m) throw new Error(`${path}: no array '${name}'; the archive holds ${listed}.`);
    const a = openMember(path, m);
    opened.push(a);
    return a;
  };
  try {
    const train = new Map<string, NpyArray>();
    for (const { array, feed, role } of roles) {
      const a = open(feed.array!);
      checkArray(a, { spec: array, role, files: [] }, arrays);
      train.set(array.name, a);
    }
    const counts = [...train.values()].map((a) => a.samples);
    if (counts.some((c) => c !== counts[0])) throw new Error(`${path}: the arrays hold different numbers of samples (${[...train.values()].map((a) => `${a.path}: ${a.samples}`).join(', ')}); every array needs one row per sample.`);
    if (!counts[0]) throw new Error(`${path}: the arrays hold 0 samples.`);

    // Validation arrays beside the training ones (Keras's x_test/y_test), unless a split is asked for.
    const valName = (n: string) => [`${n.replace(/_train$/, '')}_val`, `${n.replace(/_train$/, '')}_test`].find((v) => members.has(v));
    let val: Map<string, NpyArray> | undefined;
    if (description.validationSplit === undefined && roles.every(({ feed }) => valName(feed.array!) !== undefined)) {
      val = new Map();
      for (const { array, feed, role } of roles) {
        const a = open(valName(feed.array!)!);
        checkArray(a, { spec: array, role, files: [] }, arrays);
        val.set(array.name, a);
      }
    }
    scanSmallFloats([...train.values(), ...(val?.values() ?? [])]);
    for (const { array } of roles) {
      if (!array.range) continue;
      const { min, max, firstNonInteger: odd } = scanRange([train.get(array.name)!, ...(val ? [val.get(array.name)!] : [])]);
      if (odd) throw new Error(`${path}: ${odd.path} sample ${odd.row}: ${odd.value} is not a whole number, but model layer '${array.name}' takes whole ids ${array.range[0]}..${array.range[1]}. Save whole class ids (y.astype(np.int64)), or use a regression loss (--loss mse).`);
      if (!(min >= array.range[0] && max <= array.range[1])) {
        throw new Error(`${path}: ${train.get(array.name)!.path} ranges over [${min}, ${max}], but model layer '${array.name}' accepts [${array.range[0]}, ${array.range[1]}]. Check the labels (one-hot vs class ids, the number of classes) or the --loss.`);
      }
    }
    const sources = train as ReadonlyMap<string, RowSource>;
    const specs: ArraySpec[] = roles.map(({ array }) => ({ name: array.name, shape: train.get(array.name)!.shape.slice(1), dtype: train.get(array.name)!.dtype }));
    const used = roles.map(({ array, feed }) => `${array.name} ← ${feed.array}`).join(', ');
    if (val) {
      const size = [...val.values()][0].samples;
      return {
        describe: `NumPy archive ${path} (train ${counts[0]}, validation ${size} from ${[...val.values()].map((a) => a.path.split('[')[1]?.replace(']', '')).join(', ')}; ${used})`,
        arrays: specs,
        train: splitOf(`${path} train`, counts[0], sources),
        validation: splitOf(`${path} validation`, size, val as ReadonlyMap<string, RowSource>),
        close: () => opened.forEach((a) => a.close()),
      };
    }
    const splits = heldOutSplits(path, counts[0], sources, description.validationSplit, seed, description.validationHoldOut);
    return { describe: `NumPy archive ${path} (${splits.note}; ${used})`, arrays: specs, train: splits.train, validation: splits.validation, close: () => opened.forEach((a) => a.close()) };
  } catch (err) {
    opened.forEach((a) => a.close());
    throw err;
  }
}

function openMember(path: string, m: ZipMember): NpyArray {
  const name = `${path}[${m.name}]`;
  if (m.method === 0) return openNpy(path, { start: m.dataStart, length: m.size, name });
  if (m.method !== 8) throw new Error(`${name}: compression method ${m.method} is not one np.savez writes; save it again with np.savez.`);
  // Inflated once per archive version into the temp folder, then read by offset like any .npy.
  const { size, mtimeMs } = statSync(path);
  const key = createHash('sha1').update(`${path}\0${size}\0${mtimeMs}\0${m.name}`).digest('hex').slice(0, 20);
  const dir = join(tmpdir(), 'shoal-npz');
  const file = join(dir, `${key}.npy`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, inflateMember(path, m));
    renameSync(tmp, file);
  }
  const a = openNpy(file);
  return { ...a, path: name, readRows: a.readRows, readRange: a.readRange, close: a.close };
}
