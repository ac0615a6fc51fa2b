import { DiagnosticError, type Diagnostic } from '../../plan/diagnostics.js';
import { GraphBuilder } from '../builder.js';
import type { ModelGraph } from '../graph.js';
import { modelConfigOf, readKerasModel } from './kerasDocument.js';
import type { LayerLibrary } from './layerLibrary.js';
import { placeModel } from './placeLayers.js';

export interface KerasImportOptions {
  /** Size for `null` (variable) input dimensions such as a sequence length; default 128. */
  sequenceLength?: number;
  /** Input shapes without the batch dimension, by input layer name; override the document's. */
  inputShapes?: Record<string, number[]>;
  /**
   * The layer classes tfjs-layers knows (engine/wire/tfjsLayerLibrary.ts in Node): any class Shoal has
   * no spec of its own for is built by it. Without one, such a class is an opaque layer with a warning.
   */
  library?: LayerLibrary;
}

export interface KerasImport {
  graph: ModelGraph;
  diagnostics: Diagnostic[];
}

/**
 * Imports a Keras or tfjs-layers model — a tfjs `model.json`, or a bare Sequential / Functional model
 * config, as an object or JSON text — into a ModelGraph with shapes and costs. Problems with layers
 * come back as diagnostics; only a document that is not a Keras model at all throws.
 */
export function importKerasModel(json: unknown, options: KerasImportOptions = {}): KerasImport {
  let doc = json;
  if (typeof json === 'string') {
    try {
      doc = JSON.parse(json);
    } catch (err) {
      const message = `The model file is not valid JSON (${(err as Error).message}).`;
      throw new DiagnosticError([{ severity: 'error', code: 'malformed-json', message, where: {}, hint: 'Check that the file is the whole model.json, as tfjs or Keras wrote it.' }]);
    }
  }
  const { className, config } = modelConfigOf(doc);
  const diagnostics: Diagnostic[] = [];
  const model = readKerasModel(className, config, diagnostics);
  const builder = new GraphBuilder(model.name);
  const outputs = placeModel(model, { builder, options, library: options.library, diagnostics, placed: 0 }, { prefix: '', shared: false, frozen: false });
  const graph = builder.build(`Imported ${className} model "${model.name}"`, outputs);
  if (!graph.layers.some((l) => l.spec.kind !== 'input')) {
    diagnostics.push({ severity: 'error', code: 'empty-model', message: `Model "${model.name}" has no layers to train${graph.layers.length ? ' (only inputs)' : ''}.`, where: {}, hint: 'Export the model after adding its layers (model.save in tfjs, model.to_json in Keras); check that this is the right file.' });
  } else if (!outputs.length) {
    diagnostics.push({ severity: 'error', code: 'no-outputs', message: `Model "${model.name}" has no output that Shoal could place.`, where: {}, hint: 'Fix the errors above, or check output_layers in the model config.' });
  }
  return { graph, diagnostics };
}
