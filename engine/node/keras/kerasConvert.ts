import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isObject, type Json } from '../../model/import/configValues.js';
import { importKerasModel } from '../../model/import/importKeras.js';
import { tfjsTopologyOfKeras3 } from '../../model/import/keras3Topology.js';
import { kerasWeightSlots, type WeightSlot } from '../../model/import/kerasWeightSlots.js';
import { MODEL_CLASSES } from '../../model/import/kerasDocument.js';
import { formatDiagnostics } from '../../plan/diagnostics.js';
import { LIMITS } from '../../plan/limits.js';
import { publishFolder, syncFolder } from '../../wire/durableFiles.js';
import { Dataset, Group, openH5, stringAttr, stringListAttr, type H5File } from './h5.js';
import { readZipEntries } from './kerasZip.js';

/**
 * A Keras file (`.keras` archive or Keras 2 `.h5`) as the tfjs LayersModel everything downstream
 * reads: `<store>/keras-<content hash>/model.json` + `weights.bin`, written once per content, the
 * weights read one dataset at a time. `keras-source.json` beside them keeps what an export needs to
 * write the same kind of file back: the original config text and where each weight lives in it.
 */
export type KerasFormat = 'keras' | 'h5';

export interface KerasSource {
  format: KerasFormat;
  file: string;
  /** The model config as the file holds it (config.json, or the .h5's model_config attribute). */
  configText: string;
  /** `.keras`: metadata.json's text. `.h5`: the root's keras_version and backend. */
  metadataText?: string;
  rootAttrs?: Record<string, string>;
  /** `.h5`: model_weights' layer_names and each layer's weight_names, in file order. */
  layerNames?: string[];
  weightNames?: Record<string, string[]>;
  /** Each weight: tfjs's name, its path in the file, its shape. */
  weights: Array<{ name: string; path: string; shape: number[] }>;
}

export const SOURCE_FILE = 'keras-source.json';
const WEIGHTS = 'weights.bin';

export function kerasFormatOf(file: string): KerasFormat | null {
  return /\.keras$/i.test(file) ? 'keras' : /\.(h5|hdf5)$/i.test(file) ? 'h5' : null;
}

/** Convert (once per content) and return the stored model.json, with notes to show the user once. */
export function convertKerasFile(file: string, store: string): { modelJson: string; notes: string[] } {
  const format = kerasFormatOf(file)!;
  const dir = join(store, `keras-${fileHash(file)}`);
  const modelJson = join(dir, 'model.json');
  if (existsSync(modelJson)) return { modelJson, notes: (JSON.parse(readFileSync(join(dir, SOURCE_FILE), 'utf8')) as { notes?: string[] }).notes ?? [] };
  mkdirSync(store, { recursive: true, mode: 0o700 });
  const tmp = mkdtempSync(join(store, '.keras-'));
  try {
    const read = format === 'keras' ? readKeras3(file, tmp) : readKeras2(file, tmp);
    writeFileSync(join(tmp, SOURCE_FILE), JSON.stringify({ ...read.source, notes: read.notes }), { mode: 0o600 });
    writeFileSync(join(tmp, 'model.json'), JSON.stringify(read.document), { mode: 0o600 });
    syncFolder(tmp);
    publishFolder(tmp, dir, modelJson);
    return { modelJson, notes: read.notes };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

interface Read {
  document: Json;
  source: KerasSource;
  notes: string[];
}

function readKeras3(file: string, tmp: string): Read {
  const name = basename(file);
  const texts = new Map<string, Buffer[]>();
  const h5Path = join(tmp, 'model.weights.h5');
  const h5 = openSync(h5Path, 'w', 0o600);
  const complete = new Set<string>();
  const started = new Set<string>();
  let textBytes = 0;
  try {
    readZipEntries(file, (entry) => {
      started.add(entry);
      if (entry === 'model.weights.h5') return (chunk) => writeSync(h5, chunk);
      if (entry !== 'config.json' && entry !== 'metadata.json') return null;
      texts.set(entry, []);
      return (chunk) => {
        textBytes += chunk.length;
        if (textBytes > LIMITS.fileBytes) throw new Error(`${name}: ${entry} is larger than ${LIMITS.fileBytes / 2 ** 20} MiB; Shoal reads model configs of at most that.`);
        texts.get(entry)!.push(Buffer.from(chunk));
      };
    }, complete);
  } catch (err) {
    const cut = [...started].find((e) => !complete.has(e));
    if (cut) throw new Error(`${name} is not a complete .keras archive: its ${cut} is cut off (${(err as Error).message}; a truncated file?). Copy the file again, or save the model again with model.save("${name}"); nothing was imported.`);
    throw new Error(`${name} is not a readable .keras archive (a zip): ${(err as Error).message}. Save the model again with model.save("${name}").`);
  } finally {
    closeSync(h5);
  }
  for (const entry of ['config.json', 'model.weights.h5']) {
    if (!complete.has(entry)) throw new Error(`${name} is not a complete .keras archive: ${started.has(entry) ? `its ${entry} is cut off (a truncated file?)` : `it has no ${entry}`}. Copy the file again, or save the model again with model.save("${name}"); nothing was imported.`);
  }
  const configText = Buffer.concat(texts.get('config.json')!).toString('utf8');
  let config: unknown;
  try {
    config = JSON.parse(configText);
  } catch (err) {
    throw new Error(`${name}: config.json is not valid JSON (${(err as Error).message}).`);
  }
  if (!isObject(config) || typeof config.class_name !== 'string' || !MODEL_CLASSES.has(config.class_name)) {
    const cls = isObject(config) ? String(config.class_name) : typeof config;
    throw new Error(`${name}: config.json describes a ${cls}, not a Sequential or Functional model. A subclassed model needs get_config(); save a Functional or Sequential model.`);
  }
  refuseCustomLayers(config, name);
  const topology = tfjsTopologyOfKeras3(config);
  const slots = kerasWeightSlots(config);
  const notes: string[] = [];
  const f = openH5(h5Path, 'r');
  try {
    const specs = writeWeights(tmp, slots, (s) => s.keras3Path, (path) => f.get(path), `${name} (model.weights.h5)`);
    checkNoExtraWeights(f, 'layers', new Set(slots.map((s) => s.keras3Path)), `${name} (model.weights.h5)`);
    if (hasDatasets(f, 'optimizer')) notes.push(`${name}: the optimizer state saved in the file is not carried over; training starts with fresh optimizer state.`);
    const metadataText = texts.has('metadata.json') ? Buffer.concat(texts.get('metadata.json')!).toString('utf8') : undefined;
    const document = layersDocument(topology, specs, { compile_config: config.compile_config });
    checkAgainstGraph(document, slots, specs, name, (s) => `model.weights.h5:${s.keras3Path}`);
    return { document, notes, source: { format: 'keras', file, configText, metadataText, weights: specs.map((s, i) => ({ name: s.name, path: slots[i].keras3Path, shape: s.shape })) } };
  } finally {
    f.close();
    rmSync(h5Path, { force: true });
  }
}

function readKeras2(file: string, tmp: string): Read {
  const name = basename(file);
  let f: H5File;
  try {
    f = openH5(file, 'r');
  } catch (err) {
    throw new Error(`${name} is not a readable HDF5 file (${(err as Error).message}). Save the model again with model.save("${name}").`);
  }
  try {
    const configText = stringAttr(f, 'model_config');
    if (configText === undefined) throw new Error(`${name} has no model_config attribute: it holds weights only (save_weights), not a model. Save it with model.save("${name}").`);
    const config = JSON.parse(configText) as Json;
    const weightsGroup = f.get('model_weights');
    if (!(weightsGroup instanceof Group)) throw new Error(`${name} has no model_weights group. Save it with model.save("${name}").`);
    const layerNames = stringListAttr(weightsGroup, 'layer_names') ?? [];
    const weightNames: Record<string, string[]> = {};
    const slots = keras2Order(kerasWeightSlots(config));
    const paths = new Map<WeightSlot, string>();
    for (const layer of layerNames) {
      const group = weightsGroup.get(layer);
      const names = group instanceof Group ? (stringListAttr(group, 'weight_names') ?? []) : [];
      weightNames[layer] = names;
      const mine = slots.filter((s) => s.layer === layer);
      if (names.length !== mine.length) {
        throw new Error(`${name}: layer "${layer}" (${mine[0]?.className ?? 'unknown class'}) has ${mine.length} weights by its config but ${names.length} in model_weights/${layer} (weight_names ${JSON.stringify(names)}). The file's config and weights disagree; save the model again.`);
      }
      mine.forEach((s, i) => paths.set(s, `model_weights/${layer}/${names[i]}`));
    }
    const missing = slots.find((s) => !paths.has(s));
    if (missing) throw new Error(`${name}: layer "${missing.layer}" (${missing.className}) has weights by its config, but model_weights lists no layer "${missing.layer}". The file's config and weights disagree; save the model again.`);
    const specs = writeWeights(tmp, slots, (s) => paths.get(s)!, (path) => f.get(path), name);
    const notes = f.get('optimizer_weights') ? [`${name}: the optimizer state saved in the file is not carried over; training starts with fresh optimizer state.`] : [];
    const trainingConfig = stringAttr(f, 'training_config');
    const document = layersDocument(config, specs, { training_config: trainingConfig === undefined ? undefined : JSON.parse(trainingConfig) });
    checkAgainstGraph(document, slots, specs, name, (s) => paths.get(s)!);
    const rootAttrs = Object.fromEntries(['keras_version', 'backend'].flatMap((k) => (stringAttr(f, k) === undefined ? [] : [[k, stringAttr(f, k)!]])));
    return { document, notes, source: { format: 'h5', file, configText, rootAttrs, layerNames, weightNames, weights: specs.map((s, i) => ({ name: s.name, path: paths.get(slots[i])!, shape: s.shape })) } };
  } finally {
    f.close();
  }
}

/**
 * A layer class of the user's own (`registered_name` set, or a module outside Keras): its code is
 * Python that the file does not hold, so nothing here can compute it.
 */
function refuseCustomLayers(model: Json, name: string): void {
  const layers = isObject(model.config) && Array.isArray(model.config.layers) ? model.config.layers.filter(isObject) : [];
  for (const l of layers) {
    if (MODEL_CLASSES.has(String(l.class_name))) refuseCustomLayers(l, name);
    else if ((typeof l.registered_name === 'string' && l.registered_name !== '') || (typeof l.module === 'string' && !l.module.startsWith('keras'))) {
      const layer = String(l.name ?? (isObject(l.config) ? l.config.name : '?'));
      throw new Error(`${name}: layer "${layer}" has the custom class ${String(l.class_name)} (${String(l.registered_name ?? l.module)}), whose code is Python that the file does not hold. Build the model from Keras's own layers, or replace that layer, and save it again.`);
    }
  }
}

/** Keras 2 lists a nested model's weights trainable first (Model.weights); a plain layer's as it made them. */
function keras2Order(slots: WeightSlot[]): WeightSlot[] {
  const byLayer = new Map<string, WeightSlot[]>();
  for (const s of slots) byLayer.set(s.layer, [...(byLayer.get(s.layer) ?? []), s]);
  return [...byLayer.values()].flatMap((list) => (MODEL_CLASSES.has(list[0].className) || list.some((s) => s.className !== list[0].className) ? [...list.filter((s) => s.trainable), ...list.filter((s) => !s.trainable)] : list));
}

interface Spec {
  name: string;
  shape: number[];
  dtype: 'float32';
}

/** Every slot's dataset appended to weights.bin as float32, one dataset in memory at a time. */
function writeWeights(dir: string, slots: WeightSlot[], pathOf: (s: WeightSlot) => string, get: (path: string) => unknown, where: string): Spec[] {
  const fd = openSync(join(dir, WEIGHTS), 'w', 0o600);
  try {
    return slots.map((slot) => {
      const path = pathOf(slot);
      const node = get(path);
      if (!(node instanceof Dataset)) {
        throw new Error(`${where}: layer "${slot.layer}" (${slot.className}) needs its weight ${slot.tfjsName} at ${path}, which ${node ? 'is not a dataset' : 'does not exist'}. The file's config and weights disagree; save the model again.`);
      }
      const shape = (node.shape ?? []).map(Number);
      const values = Float32Array.from(node.value as ArrayLike<number>);
      writeSync(fd, new Uint8Array(values.buffer));
      return { name: slot.tfjsName, shape, dtype: 'float32' as const };
    });
  } finally {
    closeSync(fd);
  }
}

/** A dataset under `root` that no layer of the config claims: the weights belong to another model. */
function checkNoExtraWeights(f: H5File, root: string, claimed: Set<string>, where: string): void {
  const walk = (path: string) => {
    const node = f.get(path);
    if (node instanceof Dataset && !claimed.has(path)) throw new Error(`${where} holds the weight ${path}, which no layer of config.json has. The file's config and weights disagree; save the model again.`);
    if (node instanceof Group) for (const key of node.keys()) walk(`${path}/${key}`);
  };
  if (f.get(root)) walk(root);
}

function hasDatasets(f: H5File, root: string): boolean {
  const node = f.get(root);
  if (node instanceof Dataset) return true;
  return node instanceof Group && node.keys().some((k) => hasDatasets(f, `${root}/${k}`));
}

/** Keras 3's compile_config and Keras 2's training_config ride along under their own keys (trainingSpec reads both). */
function layersDocument(topology: Json, specs: Spec[], compiled: Record<string, unknown>): Json {
  const modelTopology = { ...topology, ...Object.fromEntries(Object.entries(compiled).filter(([, v]) => isObject(v))) };
  return { format: 'layers-model', generatedBy: 'keras', convertedBy: 'shoal', modelTopology, weightsManifest: [{ paths: [WEIGHTS], weights: specs }] };
}

/**
 * The importer's parameter count of each layer against the weights the file holds for it: a shape
 * in the file that the config does not give is named with its layer and path.
 */
function checkAgainstGraph(document: Json, slots: WeightSlot[], specs: Spec[], where: string, pathOf: (s: WeightSlot) => string): void {
  const { graph, diagnostics } = importKerasModel(document);
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`${where} cannot be imported:\n${formatDiagnostics(errors)}`);
  const counts = new Map<string, number>();
  for (const node of graph.layers) {
    if (node.id.includes('@')) continue;
    const top = node.id.split('/')[0];
    counts.set(top, (counts.get(top) ?? 0) + node.params + node.nonTrainableParams);
  }
  const held = new Map<string, { size: number; slots: number[] }>();
  slots.forEach((s, i) => {
    const entry = held.get(s.layer) ?? { size: 0, slots: [] };
    entry.size += specs[i].shape.reduce((a, b) => a * b, 1);
    entry.slots.push(i);
    held.set(s.layer, entry);
  });
  for (const [layer, { size, slots: mine }] of held) {
    const expected = counts.get(layer);
    if (expected !== undefined && expected !== size) {
      const shapes = mine.map((i) => `${pathOf(slots[i])} [${specs[i].shape.join(', ')}]`).join(', ');
      throw new Error(`${where}: layer "${layer}" (${slots[mine[0]].className}) has ${expected} weights by its config, but the file holds ${size}: ${shapes}. The file's config and weights disagree (a wrong shape?); save the model again.`);
    }
  }
}

/** sha256 of the file's bytes, read in chunks. */
function fileHash(file: string): string {
  const hash = createHash('sha256');
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0; ) hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex').slice(0, 32);
}
