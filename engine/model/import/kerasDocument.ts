import { DiagnosticError, type Diagnostic } from '../../plan/diagnostics.js';
import { LIMITS } from '../../plan/limits.js';
import { isObject, type Json } from './configValues.js';

/**
 * The shape of a Keras model document, normalised across its dialects: tfjs's `model.json`
 * (`{ modelTopology }`, possibly wrapping `model_config`), a bare `{ class_name, config }`, Sequential
 * configs with or without a layer list wrapper, and inbound nodes in the tfjs / Keras 2 form
 * (`[[[name, node, tensor, kwargs]]]`) or the Keras 3 form (`[{ args, kwargs }]`).
 */
export interface TensorRef {
  layer: string;
  node: number;
  tensor: number;
  /** Keras 3 records each tensor's shape (batch included): a hint for layers Shoal cannot infer. */
  shape?: (number | null)[];
}

export interface KerasLayer {
  name: string;
  className: string;
  config: Json;
  /** One entry per time the layer is called; each lists its input tensors in argument order. */
  calls: TensorRef[][];
}

export interface KerasModel {
  name: string;
  kind: 'sequential' | 'functional';
  layers: KerasLayer[];
  inputs: TensorRef[];
  outputs: TensorRef[];
}

/** A problem in the document's structure: reported, and the offending part skipped. */
function malformed(diagnostics: Diagnostic[], message: string, layer?: string): void {
  diagnostics.push({ severity: 'error', code: 'malformed-model', message, where: layer ? { layer } : {}, hint: 'Re-export the model from Keras or tfjs (model.save / model.toJSON).' });
}

export const MODEL_CLASSES = new Set(['Sequential', 'Functional', 'Model']);

/**
 * A tfjs GraphModel (tensorflowjs_converter's default output from a SavedModel or a frozen graph):
 * `format: "graph-model"`, or a topology that is a TensorFlow GraphDef (a list of ops under `node`).
 */
function isGraphModel(doc: unknown): boolean {
  if (!isObject(doc)) return false;
  return doc.format === 'graph-model' || (isObject(doc.modelTopology) && Array.isArray(doc.modelTopology.node));
}

/** Finds the model config inside a document; throws a clear Error when there is none. */
export function modelConfigOf(doc: unknown): { className: string; config: unknown } {
  if (isGraphModel(doc)) {
    throw new DiagnosticError([
      {
        severity: 'error',
        code: 'graph-model',
        message: 'This model.json is a tfjs GraphModel (a converted TensorFlow graph of ops, for inference): it has no Keras layers, so Shoal cannot split it into stages or train it.',
        where: {},
        hint: 'Pass a tfjs LayersModel: save the model from tfjs with model.save(), or convert the Keras model with tensorflowjs_converter --input_format keras --output_format tfjs_layers_model (a Keras SavedModel folder: --input_format keras_saved_model).',
      },
    ]);
  }
  let value = doc;
  if (isObject(value) && value.modelTopology !== undefined) value = value.modelTopology;
  if (isObject(value) && isObject(value.model_config)) value = value.model_config;
  if (isObject(value) && typeof value.class_name === 'string' && MODEL_CLASSES.has(value.class_name)) {
    return { className: value.class_name, config: value.config };
  }
  throw new DiagnosticError(
    [
      {
        severity: 'error',
        code: 'not-a-model',
        message: 'This is not a Keras or tfjs-layers model: expected a model.json with "modelTopology", or a model config with "class_name" Sequential, Functional or Model.',
        where: {},
        hint: 'Pass the model.json that tfjs model.save() or Keras model.to_json() wrote.',
      },
    ],
  );
}

function tensorRef(value: unknown): TensorRef | undefined {
  if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number' && typeof value[2] === 'number') {
    return { layer: value[0], node: value[1], tensor: value[2] };
  }
  // Keras 3: { class_name: '__keras_tensor__', config: { shape, keras_history: [name, node, tensor] } }.
  if (isObject(value) && value.class_name === '__keras_tensor__' && isObject(value.config)) {
    const ref = tensorRef(value.config.keras_history);
    if (ref && Array.isArray(value.config.shape)) ref.shape = value.config.shape as (number | null)[];
    return ref;
  }
  return undefined;
}

/** Argument lists nest a level or two (Keras 3 merge layers); deeper is malformed, and would overflow the stack. */
const MAX_ARGUMENT_DEPTH = 16;

/** Tensors anywhere inside an argument list (Keras 3 merge layers take a nested list). */
function tensorsIn(value: unknown, found: TensorRef[], depth = 0): TensorRef[] {
  const ref = tensorRef(value);
  if (ref) found.push(ref);
  else if (Array.isArray(value) && depth < MAX_ARGUMENT_DEPTH) value.forEach((v) => tensorsIn(v, found, depth + 1));
  return found;
}

/** Tensor-valued keyword arguments: attention's `value` and `key`, in that order. */
function kwargTensors(kwargs: unknown): TensorRef[] {
  if (!isObject(kwargs)) return [];
  return ['value', 'key'].flatMap((k) => (kwargs[k] === undefined ? [] : tensorsIn(kwargs[k], [])));
}

function parseCall(call: unknown): TensorRef[] | undefined {
  if (isObject(call)) return [...tensorsIn(call.args, []), ...kwargTensors(call.kwargs)];
  if (!Array.isArray(call)) return undefined;
  const refs: TensorRef[] = [];
  for (const entry of call) {
    const ref = tensorRef(entry);
    if (!ref) return undefined;
    refs.push(ref, ...(Array.isArray(entry) ? kwargTensors(entry[3]) : []));
  }
  return refs;
}

/** `input_layers` and `output_layers`: a list of refs, or (Keras 3, one tensor) a single ref. */
function refList(value: unknown): TensorRef[] | undefined {
  const single = tensorRef(value);
  if (single) return [single];
  if (!Array.isArray(value)) return undefined;
  // Array.from, not map: map skips the holes of a sparse array (built in code), which every() then passes.
  const refs = Array.from(value, tensorRef);
  return refs.every((r) => r !== undefined) ? (refs as TensorRef[]) : undefined;
}

/** The layers of a model config, with their calls; structural problems become diagnostics, never throws. */
export function readKerasModel(className: string, config: unknown, diagnostics: Diagnostic[]): KerasModel {
  const layerList = Array.isArray(config) ? config : isObject(config) ? config.layers : undefined;
  const name = isObject(config) && typeof config.name === 'string' ? config.name : 'model';
  const kind = className === 'Sequential' ? 'sequential' : 'functional';
  const model: KerasModel = { name, kind, layers: [], inputs: [], outputs: [] };
  if (!Array.isArray(layerList)) {
    malformed(diagnostics, `The ${className} config has no "layers" list.`);
    return model;
  }
  if (layerList.length > LIMITS.layers) {
    diagnostics.push({ severity: 'error', code: 'model-too-large', message: `The ${className} config "${name}" lists ${layerList.length} layers; Shoal reads models of at most ${LIMITS.layers}.`, where: {}, hint: `Use a model of at most ${LIMITS.layers} layers.` });
    return model;
  }
  layerList.forEach((raw, i) => {
    const layerName = isObject(raw) ? (raw.name ?? (isObject(raw.config) ? raw.config.name : undefined)) : undefined;
    if (!isObject(raw) || typeof raw.class_name !== 'string' || typeof layerName !== 'string') {
      malformed(diagnostics, `Layer ${i} has no "class_name" and "name"; it is skipped.`);
      return;
    }
    const config = isObject(raw.config) ? raw.config : {};
    const calls: TensorRef[][] = [];
    if (kind === 'functional') {
      const nodes = Array.isArray(raw.inbound_nodes) ? raw.inbound_nodes : [];
      for (const node of nodes) {
        const call = parseCall(node);
        if (call) calls.push(call);
        else malformed(diagnostics, `Layer "${layerName}" has an inbound node Shoal cannot read; that call is skipped.`, layerName);
      }
    }
    model.layers.push({ name: layerName, className: raw.class_name, config, calls });
  });
  if (kind === 'functional' && isObject(config)) {
    const inputs = refList(config.input_layers);
    const outputs = refList(config.output_layers);
    if (!inputs || !outputs) malformed(diagnostics, `The ${className} config lacks readable "input_layers" or "output_layers".`);
    model.inputs = inputs ?? [];
    model.outputs = outputs ?? [];
    renumberNodes(model);
  }
  return model;
}

/**
 * Keras 2 numbers a layer's nodes among the calls kept in the config. tfjs numbers them among all the
 * layer's calls, so a nested model, whose own construction is its first call, is referenced from 1:
 * shift such references down so that node k is the k-th listed call.
 */
function renumberNodes(model: KerasModel): void {
  const refsTo = new Map<string, TensorRef[]>();
  for (const r of [...model.layers.flatMap((l) => l.calls.flat()), ...model.outputs]) {
    const list = refsTo.get(r.layer);
    if (list) list.push(r);
    else refsTo.set(r.layer, [r]);
  }
  for (const layer of model.layers) {
    const mine = refsTo.get(layer.name) ?? [];
    const offset = mine.reduce((max, r) => Math.max(max, r.node), 0) - (layer.calls.length - 1);
    if (layer.calls.length > 0 && offset > 0) for (const r of mine) r.node -= offset;
  }
}
