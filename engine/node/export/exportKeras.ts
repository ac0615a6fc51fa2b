import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { CheckpointHeader } from '../../wire/checkpointFile.js';
import type { WeightsExport } from '../../protocol/runs.js';
import { groupAt, openH5, type H5File } from '../keras/h5.js';
import { SOURCE_FILE, type KerasFormat, type KerasSource } from '../keras/kerasConvert.js';
import { writeZip } from '../keras/kerasZip.js';

/** The Keras file a model was converted from, or null for a model opened as a tfjs model.json. */
export function kerasSourceOf(modelJson: string): KerasSource | null {
  const file = join(dirname(modelJson), SOURCE_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as KerasSource) : null;
}

/**
 * The trained model as the Keras file it came from: the same config (text untouched), and each
 * weight from the checkpoint at the path and shape the original file held it, so Keras's own
 * loader finds it where it looks (saving_lib for `.keras`, legacy_h5_format for `.h5`). Optimizer
 * slots are left out, as in every export. Written under a temporary name and renamed: a failed
 * export leaves nothing behind.
 */
export function exportKerasFile(header: CheckpointHeader, body: Float32Array, checkpoint: string, source: KerasSource, format: KerasFormat, out: string): WeightsExport {
  if (format !== source.format) {
    throw new Error(`${basename(source.file)} is a ${source.format === 'keras' ? 'Keras 3 .keras archive' : 'Keras 2 .h5 file'}; Shoal exports it as ${source.format === 'keras' ? '.keras' : '.h5'} (its own format) or tfjs, not as ${format === 'keras' ? '.keras' : '.h5'}: use --format ${source.format} or --format tfjs.`);
  }
  const file = resolve(out);
  if (file === resolve(source.file)) throw new Error(`Export file ${file} (--out) is the model the run was trained from; exporting there would replace it. Choose another file (--out).`);
  if (existsSync(file) && statSync(file).isDirectory()) throw new Error(`Export file ${file} (--out) is a folder; give a file name ending in .${format === 'keras' ? 'keras' : 'h5'}.`);
  mkdirSync(dirname(file), { recursive: true });
  const byName = new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, t]));
  const weights = source.weights.map((w) => {
    const tensor = byName.get(w.name);
    const size = w.shape.reduce((a, b) => a * b, 1);
    if (!tensor) throw new Error(`Checkpoint ${checkpoint} has no weight "${w.name}" that ${source.file} holds at ${w.path}; it was written for another model.`);
    if (tensor.length !== size) throw new Error(`Weight "${w.name}" has ${tensor.length} values in ${checkpoint} but ${size} at ${w.path} [${w.shape.join(', ')}] in ${source.file}.`);
    return { ...w, values: body.subarray(tensor.offset, tensor.offset + tensor.length) };
  });
  const tmp = mkdtempSync(join(dirname(file), '.shoal-export-'));
  try {
    const h5 = join(tmp, format === 'keras' ? 'model.weights.h5' : basename(file));
    const f = openH5(h5, 'w');
    try {
      if (format === 'h5') writeKeras2Layout(f, source);
      for (const w of weights) {
        const at = w.path.lastIndexOf('/');
        groupAt(f, w.path.slice(0, at)).create_dataset({ name: w.path.slice(at + 1), data: Float32Array.from(w.values), shape: w.shape, dtype: '<f' });
      }
    } finally {
      f.close();
    }
    let written = h5;
    if (format === 'keras') {
      // Keras writes metadata.json, config.json, then model.weights.h5, stored (zipfile's default).
      written = join(tmp, basename(file));
      const metadata = source.metadataText ?? JSON.stringify({ keras_version: '3', date_saved: new Date().toISOString() });
      writeZip(written, [
        { name: 'metadata.json', bytes: Buffer.from(metadata, 'utf8') },
        { name: 'config.json', bytes: Buffer.from(source.configText, 'utf8') },
        { name: 'model.weights.h5', file: h5 },
      ]);
    }
    renameSync(written, file);
  } catch (err) {
    throw new Error(`Cannot write ${file}: ${(err as Error).message}. Free space, or choose another file (--out).`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return { dir: dirname(file), files: [basename(file)], model: header.model, step: header.step, checkpoint, bytes: statSync(file).size };
}

/** Keras 2's attributes: model_config and versions on the root, layer_names and each layer's weight_names. */
function writeKeras2Layout(f: H5File, source: KerasSource): void {
  f.create_attribute('model_config', source.configText);
  for (const [k, v] of Object.entries(source.rootAttrs ?? {})) f.create_attribute(k, v);
  const group = f.create_group('model_weights');
  group.create_attribute('layer_names', source.layerNames ?? []);
  for (const [k, v] of Object.entries(source.rootAttrs ?? {})) group.create_attribute(k, v);
  for (const layer of source.layerNames ?? []) groupAt(f, `model_weights/${layer}`).create_attribute('weight_names', source.weightNames?.[layer] ?? []);
}
