import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { prepareExportFolder } from './exportFolder.js';
import { basename, join, resolve } from 'node:path';
import { exportKerasFile, kerasSourceOf } from './exportKeras.js';
import { kerasFormatOf } from '../keras/kerasConvert.js';
import { readCheckpoint, type CheckpointHeader } from '../../wire/checkpointFile.js';
import { kerasTopology } from '../../model/export/kerasTopology.js';
import { zooModel } from '../../model/zoo.js';
import { readLayersModel, writeLayersModel } from '../../wire/layersModelFile.js';
import { isModelFile } from '../modelRef.js';
import type { WeightsExport } from '../../protocol/runs.js';
import { findResumePoint } from '../jobs/runStore.js';

export type { WeightsExport };

/** What `shoal export --format` writes: tfjs's model.json + weights, a Keras 3 archive or a Keras 2 .h5. */
export type ExportFormat = 'tfjs' | 'keras' | 'h5';

export const WEIGHTS_FILE = 'group1-shard1of1.bin';


/**
 * Export a run's trained weights in tfjs format — `model.json` (Keras topology + weightsManifest) and
 * one float32 weights file — loadable by `tf.loadLayersModel`. `target` is a run id, a run folder or a
 * checkpoint file, as for `shoal resume`; the newest checkpoint of a run is used. Optimizer slots are
 * left out: the export is for inference (or fine-tuning from scratch optimizer state).
 */
export function exportWeights(target: string, outDir?: string, generatedBy = 'shoal 0.1.0', format?: ExportFormat): WeightsExport {
  const { checkpoint, runDir } = findResumePoint(target);
  const { header, body } = readCheckpoint(checkpoint);
  if (outDir !== undefined && outDir.trim() === '') throw new Error('--out is empty: give the folder to export into, or leave --out out for tfjs-model in the run folder.');
  // A model that came as a Keras file goes home as one by default.
  const keras = isModelFile(header.model) ? kerasSourceOf(header.model) : null;
  const chosen = format ?? keras?.format ?? 'tfjs';
  if (chosen !== 'tfjs') {
    if (!keras) throw new Error(`${header.model} was not opened from a Keras file, so Shoal has no Keras config to write it with; export it with --format tfjs (the default).`);
    const name = basename(keras.file);
    const out = outDir === undefined ? join(runDir ?? '.', name) : kerasFormatOf(outDir) ? outDir : join(outDir, name);
    return exportKerasFile(header, body, checkpoint, keras, chosen, out);
  }
  const dir = resolve(outDir ?? join(runDir ?? '.', 'tfjs-model'));
  prepareExportFolder(dir);
  if (isModelFile(header.model)) return exportImported(header, body, checkpoint, dir, generatedBy);
  const graph = zooModel(header.model);
  const { topology, weights } = kerasTopology(graph, generatedBy);
  const byName = new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, t]));
  const size = weights.reduce((n, w) => n + w.shape.reduce((a, b) => a * b, 1), 0);
  const data = new Float32Array(size);
  let at = 0;
  for (const w of weights) {
    const tensor = byName.get(w.name);
    const expected = w.shape.reduce((a, b) => a * b, 1);
    if (!tensor) throw new Error(`Checkpoint ${checkpoint} has no parameter "${w.name}" that model "${graph.name}" needs; it was written for another model.`);
    if (tensor.length !== expected) {
      throw new Error(`Parameter "${w.name}" has ${tensor.length} values in ${checkpoint} but ${expected} in model "${graph.name}" [${w.shape.join(', ')}].`);
    }
    data.set(body.subarray(tensor.offset, tensor.offset + tensor.length), at);
    at += expected;
  }
  const modelJson = {
    format: 'layers-model',
    generatedBy,
    convertedBy: null,
    modelTopology: topology,
    weightsManifest: [{ paths: [WEIGHTS_FILE], weights }],
    userDefinedMetadata: { shoal: { checkpoint, step: header.step, jobId: header.jobId, createdAt: header.createdAt } },
  };
  // Weights first, then model.json: a folder with a model.json always has its weights.
  writeAtomically(join(dir, WEIGHTS_FILE), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  writeAtomically(join(dir, 'model.json'), JSON.stringify(modelJson, null, 1) + '\n');
  return { dir, files: ['model.json', WEIGHTS_FILE], model: graph.name, step: header.step, checkpoint, bytes: data.byteLength };
}

function writeAtomically(file: string, contents: string | Buffer): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, contents);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new Error(`Cannot write ${file}: ${(err as Error).message}. Free space, or choose another folder (--out).`);
  }
}

/**
 * A model opened from a file goes home as it came: its own model.json topology (functional graph,
 * names and configs untouched), with every weight of its manifest — trained or not (frozen layers,
 * batch-norm statistics) — taken from the checkpoint by name.
 */
function exportImported(header: CheckpointHeader, body: Float32Array, checkpoint: string, dir: string, generatedBy: string): WeightsExport {
  const original = readLayersModel(header.model);
  const byName = new Map(header.tensors.filter((t) => !t.slot).map((t) => [t.name, t]));
  const names = original.weightNames.length > 0 ? original.weightNames : header.tensors.filter((t) => !t.slot).map((t) => t.name);
  const weights = names.map((name) => {
    const tensor = byName.get(name);
    if (!tensor) throw new Error(`Checkpoint ${checkpoint} has no weight "${name}" that ${header.model} lists; it was written for another model.`);
    return { name, shape: tensor.shape, values: body.subarray(tensor.offset, tensor.offset + tensor.length) };
  });
  const document = { ...original.document, userDefinedMetadata: { ...((original.document.userDefinedMetadata as object) ?? {}), shoal: { checkpoint, step: header.step, jobId: header.jobId, createdAt: header.createdAt } } };
  const written = writeLayersModel(dir, document, weights, { generatedBy });
  return { dir, files: ['model.json', WEIGHTS_FILE], model: header.model, step: header.step, checkpoint, bytes: written.bytes };
}
