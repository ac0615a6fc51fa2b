import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { ModelGraph } from '../../model/graph.js';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import { readLayersModel } from '../../wire/layersModelFile.js';
import type { Payload, PayloadFile } from './uploadPayload.js';

/**
 * A deployed job's own files: the user's model file with its weights (`model/`) and a NumPy data
 * folder (`data/`), as one payload named by the hash of its contents. A host keeps it in
 * ~/.shoal/inputs/<hash>/, so deploying the same model and data again uploads nothing.
 */
export interface JobInputs extends Payload {
  /** The model graph and training setup as processes on a host that received the payload see them. */
  remote(): { model: ModelGraph; training: TrainingSetup };
}

export function jobInputs(model: ModelGraph, training: TrainingSetup): JobInputs | null {
  const files: Array<Omit<PayloadFile, 'bytes'>> = [];
  if (model.source) {
    const modelDir = dirname(model.source.modelFile);
    const weightFiles = readLayersModel(model.source.modelFile).document.weightsManifest as Array<{ paths: string[] }> | undefined;
    files.push({ local: model.source.modelFile, relative: `model/${relative(modelDir, model.source.modelFile)}` });
    for (const path of (weightFiles ?? []).flatMap((g) => g.paths)) files.push({ local: join(modelDir, path), relative: `model/${path}` });
  }
  if (training.data.kind === 'npy') {
    const dir = training.data.dir;
    for (const file of npyFiles(dir)) files.push({ local: join(dir, file), relative: `data/${file}` });
  }
  if (files.length === 0) return null;
  const sized = files.map((f) => ({ ...f, bytes: statSync(f.local).size }));
  const hash = createHash('sha256');
  for (const f of sized) {
    hash.update(`${f.relative}\0${f.bytes}\0`);
    hash.update(readFileSync(f.local));
  }
  const digest = hash.digest('hex').slice(0, 20);
  const base = `~/.shoal/inputs/${digest}`;
  return {
    hash: digest,
    files: sized,
    bytes: sized.reduce((n, f) => n + f.bytes, 0),
    remote: () => ({
      model: model.source ? { ...model, source: { modelFile: `${base}/model/${relative(dirname(model.source.modelFile), model.source.modelFile)}` } } : model,
      training: training.data.kind === 'npy' ? { ...training, data: { ...training.data, dir: `${base}/data` } } : training,
    }),
  };
}

/** The .npy files of a data folder and of its val/ subfolder, relative to it. */
function npyFiles(dir: string): string[] {
  const list = (sub: string) => readdirSync(join(dir, sub)).filter((f) => f.endsWith('.npy')).map((f) => (sub ? `${sub}/${f}` : f));
  let val: string[] = [];
  try {
    if (statSync(join(dir, 'val')).isDirectory()) val = list('val');
  } catch {
    // No val/ folder: the validation split is held out by seed.
  }
  return [...list(''), ...val];
}
