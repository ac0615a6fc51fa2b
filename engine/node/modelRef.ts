import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { checkWeightFiles } from '../wire/layersModelFile.js';
import { explainFileError } from '../wire/fileErrors.js';
import type { ModelGraph } from '../model/graph.js';
import { importKerasModel } from '../model/import/importKeras.js';
import { zooModel, zooModelNames } from '../model/zoo.js';
import { formatDiagnostics, type Diagnostic } from '../plan/diagnostics.js';
import { LIMITS } from '../plan/limits.js';

/**
 * What names a model everywhere a job is recorded (job.json, checkpoints, plans): a zoo name, or the
 * absolute path of the model file it was opened from.
 */
export function modelRef(graph: ModelGraph): string {
  return graph.source?.modelFile ?? graph.name;
}

export function isModelFile(ref: string): boolean {
  return ref.endsWith('.json') || ref.includes('/') || ref.includes('\\');
}

/**
 * The model a reference names: a zoo model, or a tfjs LayersModel file (`model.json`), imported with
 * its shapes and costs. A file that does not import cleanly is refused with every problem listed.
 */
export function loadModel(ref: string): ModelGraph {
  return openModel(ref).graph;
}

/** loadModel with the importer's warnings (layers priced by estimate, options it notes), for `shoal plan` to show. */
export function openModel(ref: string): { graph: ModelGraph; warnings: Diagnostic[] } {
  if (!isModelFile(ref)) return { graph: zooModel(ref), warnings: [] };
  const file = resolve(ref);
  if (!existsSync(file)) throw new Error(`Model file ${file} does not exist. Pass the model.json that tfjs's model.save() wrote, or a built-in model (${zooModelNames().join(', ')}).`);
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
      imported = importKerasModel(doc);
    } catch (err) {
      throw new Error(`Model file ${path}: ${(err as Error).message}`);
    }
    const { graph, diagnostics } = imported;
    const errors = diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new Error(`Model file ${path} cannot be imported:\n${formatDiagnostics(errors)}`);
    // The weights it names are checked (place and size) before any job starts, not read.
    if (isRecord(doc)) checkWeightFiles(doc, dirname(path), path);
    return { graph: { ...graph, source: { modelFile: path } }, warnings: diagnostics.filter((d) => d.severity !== 'error') };
  }
}

/** The model document of an imported model (for its training_config), or undefined for a zoo model. */
export function modelDocument(graph: ModelGraph): unknown {
  return graph.source ? JSON.parse(readFileSync(graph.source.modelFile, 'utf8')) : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
