import type { Diagnostic } from '../../plan/diagnostics.js';
import { GraphBuilder } from '../builder.js';
import type { ModelGraph } from '../graph.js';
import { modelConfigOf, readKerasModel } from './kerasDocument.js';
import { placeModel } from './placeLayers.js';

export interface KerasImportOptions {
  /** Size for `null` (variable) input dimensions such as a sequence length; default 128. */
  sequenceLength?: number;
  /** Input shapes without the batch dimension, by input layer name; override the document's. */
  inputShapes?: Record<string, number[]>;
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
      throw new Error(`The model file is not valid JSON (${(err as Error).message}).`);
    }
  }
  const { className, config } = modelConfigOf(doc);
  const diagnostics: Diagnostic[] = [];
  const model = readKerasModel(className, config, diagnostics);
  const builder = new GraphBuilder(model.name);
  const outputs = placeModel(model, { builder, options, diagnostics }, { prefix: '', shared: false, frozen: false });
  return { graph: builder.build(`Imported ${className} model "${model.name}"`, outputs), diagnostics };
}
