import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { ModelGraph } from '../model/graph.js';
import { base64Bytes, MAX_IMPORT_BYTES, manifestPaths, WEIGHT_FILE_NAME, type ImportModelRequest } from '../protocol/modelImport.js';
import { publishFolder, syncFolder, writeNewFileDurably } from '../wire/durableFiles.js';
import { manifestGroupBytes, readLayersModelDocument } from '../wire/layersModelFile.js';
import { loadModel } from './modelRef.js';
import { modelsRoot } from './modelStore.js';

/**
 * Models the studio imported (opened in the renderer, picked or dropped), stored where agents can read
 * them: `<data dir>/models/<content hash>/model.json` with the `.bin` files its weightsManifest names.
 * The same content lands in the same folder, so importing a model twice stores it once.
 */
export { modelsRoot };

/** Whether a model file lies in the studio's model store (the only model files the studio trains). */
export function isImportedModelFile(file: string, root = modelsRoot()): boolean {
  const rel = relative(resolve(root), resolve(file));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Store a model the renderer hands over and return its graph (with `source.modelFile`, the stored
 * model.json). Every weights file the model.json names must be given, with the bytes its manifest
 * needs; the files are written mode 600 into a fresh folder (mode 700) that is renamed into place.
 */
export function importModelFile(request: ImportModelRequest, root = modelsRoot()): ModelGraph {
  const { name, modelJson, weights = [] } = request;
  if (modelJson.modelTopology == null) throw new Error(`${name} has no modelTopology: it is not a tfjs LayersModel. Open the model.json that Keras (via tensorflowjs_converter) or tfjs's model.save() wrote.`);
  const text = Buffer.from(JSON.stringify(modelJson), 'utf8');
  const given = new Map<string, string>();
  for (const file of weights) {
    if (given.has(file.path)) throw new Error(`Weights file ${file.path} was given twice; pick each .bin file once.`);
    given.set(file.path, file.base64);
  }
  const named = [...new Set(manifestPaths(modelJson))];
  const badName = named.find((p) => !WEIGHT_FILE_NAME.test(p));
  if (badName !== undefined) throw new Error(`${name} names the weights file "${badName}", which is not a plain file name; Shoal imports weights that lie beside model.json. Save the model again with model.save().`);
  const missing = named.filter((p) => !given.has(p));
  if (missing.length) {
    throw new Error(`${name} names the weights file${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which ${missing.length > 1 ? 'were' : 'was'} not given: open the model.json together with its .bin files (pick or drop them all at once).`);
  }
  const total = text.length + named.reduce((n, p) => n + base64Bytes(given.get(p)!), 0);
  if (total > MAX_IMPORT_BYTES) {
    throw new Error(`${name} and its weights are ${(total / 2 ** 20).toFixed(1)} MiB; the studio imports up to ${MAX_IMPORT_BYTES / 2 ** 20} MiB. Train a larger model from the command line: shoal train --model path/to/model.json --data DIR.`);
  }
  const bytes = new Map(named.map((p) => [p, Buffer.from(given.get(p)!, 'base64')]));
  checkGroupSizes(name, modelJson, bytes);

  const hash = createHash('sha256').update(text);
  for (const [path, data] of bytes) hash.update(`\0${path}\0${data.length}\0`).update(data);
  const dir = join(root, hash.digest('hex').slice(0, 32));
  const file = join(dir, 'model.json');
  if (existsSync(file)) return loadModel(file);

  mkdirSync(root, { recursive: true, mode: 0o700 });
  const tmp = mkdtempSync(join(root, '.import-'));
  try {
    for (const [path, data] of bytes) writeNewFileDurably(join(tmp, path), data, 0o600);
    writeNewFileDurably(join(tmp, 'model.json'), text, 0o600);
    syncFolder(tmp);
    // What the agents will do with it: read every weight, and import the topology.
    readLayersModelDocument(modelJson, tmp, name);
    try {
      loadModel(join(tmp, 'model.json'));
    } catch (err) {
      throw new Error((err as Error).message.split(join(tmp, 'model.json')).join(name));
    }
    // The same content imported meanwhile: that one is kept.
    publishFolder(tmp, dir, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EACCES' || code === 'EROFS') throw new Error(`Cannot store ${name} under ${root}: ${code === 'ENOSPC' ? 'the disk is full' : 'the folder is not writable'}. Free space or set SHOAL_DATA_DIR to another folder.`);
    throw err;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return loadModel(file);
}

/** Each manifest group's files hold exactly the bytes its weights need (tfjs concatenates a group's files). */
function checkGroupSizes(name: string, modelJson: Record<string, unknown>, bytes: Map<string, Buffer>): void {
  const groups = manifestGroupBytes(modelJson, name);
  groups.forEach(({ paths, bytes: expected }, g) => {
    const found = paths.reduce((n, p) => n + (bytes.get(p)?.length ?? 0), 0);
    if (found !== expected) {
      throw new Error(`Weights file ${paths.join(' + ')} holds ${found} bytes, but ${name}'s weightsManifest${groups.length > 1 ? ` group ${g + 1}` : ''} needs ${expected}: pick the .bin file${paths.length > 1 ? 's' : ''} saved with this model.json.`);
    }
  });
}
