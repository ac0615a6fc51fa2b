import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkWeightFiles } from '../wire/layersModelFile.js';
import { explainFileError } from '../wire/fileErrors.js';
import type { ModelGraph } from '../model/graph.js';
import { importKerasModel } from '../model/import/importKeras.js';
import { convertKerasFile, kerasFormatOf } from './keras/kerasConvert.js';
import { modelsRoot } from './modelStore.js';
import { zooModel, zooModelNames } from '../model/zoo.js';
import { formatDiagnostics, type Diagnostic } from '../plan/diagnostics.js';
import { LIMITS } from '../plan/limits.js';
import { tfjsLayerLibrary } from '../wire/tfjsLayerLibrary.js';
import { registerUserLayers } from '../wire/userLayers.js';

/**
 * What names a model everywhere a job is recorded (job.json, checkpoints, plans): a zoo name, or the
 * absolute path of the model file it was opened from.
 */
export function modelRef(graph: ModelGraph): string {
  return graph.source?.modelFile ?? graph.name;
}

export function isModelFile(ref: string): boolean {
  return ref.endsWith('.json') || kerasFormatOf(ref) !== null || ref.includes('/') || ref.includes('\\');
}

const told = new Set<string>();

/** The `--layers` option's value: a path, or undefined when it is not given. */
export function layersOption(values: { layers?: unknown }): string | undefined {
  if (values.layers === undefined) return undefined;
  if (typeof values.layers !== 'string' || values.layers.trim() === '') throw new Error('--layers is empty: give the JavaScript module that registers your layer classes, or leave --layers out.');
  return values.layers;
}

/**
 * The model a reference names, after running the user's `--layers` module (if any) so that its classes
 * are registered: what every command that takes `--model` and `--layers` opens.
 */
export async function openModel(ref: string, layersFile?: string): Promise<ModelGraph> {
  if (layersFile === undefined) return loadModel(ref);
  await registerUserLayers(layersFile);
  if (!isModelFile(ref)) throw new Error(`--layers applies to a model file; "${ref}" is a built-in model. Pass --model with your model.json, or leave out --layers.`);
  return loadModel(ref, resolve(layersFile));
}

/**
 * The model a reference names: a zoo model, or a tfjs LayersModel file (`model.json`), imported with
 * its shapes and costs. Its layers are read by tfjs-layers' registry, with the classes of
 * `layersFile` (the user's module, registered beforehand by openModel), which the graph then names so
 * every agent registers it too. A file that does not import cleanly is refused with every problem listed.
 */
export function loadModel(ref: string, layersFile?: string): ModelGraph {
  return openModelWithWarnings(ref, layersFile).graph;
}

/** loadModel with the importer's warnings (layers priced by estimate, options it notes), for `shoal plan` to show. */
export function openModelWithWarnings(ref: string, layersFile?: string): { graph: ModelGraph; warnings: Diagnostic[] } {
  if (!isModelFile(ref)) return { graph: zooModel(ref), warnings: [] };
  const file = resolve(ref);
  if (!existsSync(file)) throw new Error(`Model file ${file} does not exist. Pass a Keras file (.keras, .h5), the model.json that tfjs's model.save() wrote, or a built-in model (${zooModelNames().join(', ')}).`);
  if (kerasFormatOf(file) && !statSync(file).isDirectory()) {
    // Read as the tfjs LayersModel it converts to, stored once per content: agents, deploys and
    // checkpoints then see one kind of model file.
    const { modelJson, notes } = convertKerasFile(file, modelsRoot());
    for (const note of notes.filter((n) => !told.has(n))) {
      told.add(note);
      process.stderr.write(`shoal: ${note}\n`);
    }
    return readModelFile(modelJson);
  }
  return readModelFile(file);

  function readModelFile(path: string): { graph: ModelGraph; warnings: Diagnostic[] } {
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch (err) {
      throw explainFileError(err, 'Model file', path);
    }
    if (stat.isDirectory()) throw new Error(`Model file ${path} is a folder. Pass the model.json in it (${join(path, 'model.json')}), or a built-in model.`);
    // Refused by size before it is read: a parsed document takes several times its bytes.
    const bytes = stat.size;
    if (bytes > LIMITS.fileBytes) throw new Error(`Model file ${path} is ${(bytes / 2 ** 20).toFixed(1)} MiB; Shoal reads model files (the topology, not the weights) of at most ${LIMITS.fileBytes / 2 ** 20} MiB.`);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw explainFileError(err, 'Model file', path);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new Error(`Model file ${path} is not valid JSON (${(err as Error).message}).`);
    }
    let imported: ReturnType<typeof importKerasModel>;
    try {
      imported = importKerasModel(doc, { library: tfjsLayerLibrary });
    } catch (err) {
      throw new Error(`Model file ${path}: ${(err as Error).message}`);
    }
    const { graph, diagnostics } = imported;
    const errors = diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new Error(`Model file ${path} cannot be imported:\n${formatDiagnostics(errors)}`);
    // The weights it names are checked (place and size) before any job starts, not read.
    if (isRecord(doc)) checkWeightFiles(doc, dirname(path), path);
    return { graph: { ...graph, source: { modelFile: path, ...(layersFile ? { layersFile } : {}) } }, warnings: diagnostics.filter((d) => d.severity !== 'error') };
  }
}

/** The model document of an imported model (for its training_config), or undefined for a zoo model. */
export function modelDocument(graph: ModelGraph): unknown {
  return graph.source ? JSON.parse(readFileSync(graph.source.modelFile, 'utf8')) : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
