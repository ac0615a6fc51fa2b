import { createHash } from 'node:crypto';
import { basename, dirname, join, relative } from 'node:path';
import type { ModelGraph } from '../../model/graph.js';
import type { TrainingSetup } from '../../protocol/trainingSetup.js';
import { hostPath } from '../../wire/hostPath.js';
import { readLayersModel } from '../../wire/layersModelFile.js';
import { dataFiles } from './dataFiles.js';
import { digestFiles } from './fileDigest.js';
import { DEFAULT_REMOTE_DIR, remotePath } from './remotePaths.js';
import type { Payload } from './uploadPayload.js';

/**
 * A deployed job's own files: the user's model file with its weights (`model/`) and the files its data
 * reader opens (`data/`, any dataset format), as one payload named by a digest of its files' names,
 * sizes and cheap content digests (fileDigest.ts). A host keeps it in ~/.shoal/inputs/<hash>/ (under the cluster's remote directory), so
 * deploying the same model and data again uploads nothing. Data described with `location: "hosts"` is
 * not uploaded: `onHosts` lists its files, which each host must hold the same as this machine.
 */
export interface JobInputs extends Payload {
  /** The model graph and training setup as processes on a host that received the payload (under `remoteDir`) see them. */
  remote(remoteDir?: string): { model: ModelGraph; training: TrainingSetup };
}

export function jobInputs(model: ModelGraph, training: TrainingSetup): JobInputs | null {
  const files: Array<{ local: string; relative: string }> = [];
  if (model.source) {
    const modelDir = dirname(model.source.modelFile);
    const weightFiles = readLayersModel(model.source.modelFile).document.weightsManifest as Array<{ paths: string[] }> | undefined;
    files.push({ local: model.source.modelFile, relative: `model/${relative(modelDir, model.source.modelFile)}` });
    for (const path of (weightFiles ?? []).flatMap((g) => g.paths)) files.push({ local: join(modelDir, path), relative: `model/${path}` });
    // The user's layer classes travel beside the model; every agent registers them before building it.
    if (model.source.layersFile) files.push({ local: model.source.layersFile, relative: `layers/${basename(model.source.layersFile)}` });
  }
  const data = dataFiles(training.data);
  const local = (rel: string) => join(hostPath(data!.dir), rel);
  if (data && !data.onHosts) for (const rel of data.relatives) files.push({ local: local(rel), relative: `data/${rel}` });
  const onHosts = data?.onHosts ? withDigests(data.relatives.map((rel) => ({ local: local(rel), relative: rel }))) : undefined;
  if (files.length === 0 && !onHosts) return null;

  const sized = withDigests(files);
  const hash = createHash('sha256');
  for (const f of sized) hash.update(`${f.relative}\0${f.bytes}\0${f.digest}\0`);
  const digest = hash.digest('hex').slice(0, 20);
  return {
    hash: digest,
    files: sized,
    bytes: sized.reduce((n, f) => n + f.bytes, 0),
    ...(onHosts && data ? { onHosts: { dir: data.dir, files: onHosts } } : {}),
    remote: (remoteDir = DEFAULT_REMOTE_DIR) => {
      const base = remotePath(remoteDir, 'inputs', digest);
      return {
        model: model.source ? { ...model, source: remoteSource(model.source, base) } : model,
        training: data && !data.onHosts ? { ...training, data: data.movedTo(`${base}/data`) } : training,
      };
    },
  };
}

/** Where a deployed job's processes find the model file and the user's layer module under the payload `base`. */
function remoteSource(source: NonNullable<ModelGraph['source']>, base: string): NonNullable<ModelGraph['source']> {
  const modelFile = `${base}/model/${relative(dirname(source.modelFile), source.modelFile)}`;
  return source.layersFile ? { modelFile, layersFile: `${base}/layers/${basename(source.layersFile)}` } : { modelFile };
}

function withDigests<T extends { local: string }>(files: T[]): Array<T & { bytes: number; digest: string }> {
  const digests = digestFiles(files.map((f) => f.local));
  return files.map((f, i) => ({ ...f, ...digests[i] }));
}
