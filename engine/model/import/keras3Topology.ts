import { isObject, type Json } from './configValues.js';
import { MODEL_CLASSES } from './kerasDocument.js';

/**
 * A Keras 3 model config (a `.keras` archive's config.json) in the Keras 2 / tfjs dialect that
 * tfjs-layers builds: serialized objects (`{module, class_name, config, registered_name}`) become
 * `{class_name, config}`, dtype policies their dtype name, InputLayer's `batch_shape` its
 * `batch_input_shape`, `{args, kwargs}` calls tfjs's `[[layer, node, tensor, kwargs], …]` nodes and a
 * single output tensor a list of one. tfjs counts a nested model's construction as its node 0, so a
 * call of a nested model is referenced one node higher than Keras 3 numbers it.
 */
export function tfjsTopologyOfKeras3(config: Json): Json {
  return modelEntry(config);
}

function modelEntry(entry: Json): Json {
  const config = isObject(entry.config) ? entry.config : {};
  const layers = Array.isArray(config.layers) ? config.layers.filter(isObject) : [];
  const nested = new Set(layers.filter((l) => typeof l.class_name === 'string' && MODEL_CLASSES.has(l.class_name)).map(layerName));
  const converted: Json = { ...(plain(config) as Json), layers: layers.map((l) => layerEntry(l, nested, entry.class_name === 'Sequential')) };
  if (entry.class_name !== 'Sequential') {
    converted.input_layers = refList(config.input_layers, nested);
    converted.output_layers = refList(config.output_layers, nested);
  }
  return { class_name: entry.class_name === 'Model' ? 'Functional' : entry.class_name, config: converted };
}

function layerName(l: Json): string {
  return String(l.name ?? (isObject(l.config) ? l.config.name : ''));
}

function layerEntry(l: Json, nested: Set<string>, inSequential: boolean): Json {
  if (typeof l.class_name === 'string' && MODEL_CLASSES.has(l.class_name)) {
    return { ...modelEntry(l), name: layerName(l), inbound_nodes: nodes(l.inbound_nodes, nested) };
  }
  const config = plain(isObject(l.config) ? l.config : {}) as Json;
  if (l.class_name === 'InputLayer' && config.batch_shape !== undefined) {
    const batchShape = config.batch_shape;
    delete config.batch_shape;
    delete config.optional;
    delete config.ragged;
    config.batch_input_shape = batchShape;
  }
  const out: Json = { class_name: l.class_name, config, name: layerName(l) };
  if (!inSequential) out.inbound_nodes = nodes(l.inbound_nodes, nested);
  return out;
}

/** A config value with every serialized Keras object in the tfjs form. */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (!isObject(value)) return value;
  if (typeof value.class_name === 'string' && 'module' in value && isObject(value.config)) {
    if (/DTypePolicy$/.test(value.class_name)) return typeof value.config.name === 'string' ? value.config.name : 'float32';
    return { class_name: value.class_name, config: plain(value.config) };
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
}

type Ref = [string, number, number];

function ref(value: unknown, nested: Set<string>): Ref | undefined {
  if (isObject(value) && value.class_name === '__keras_tensor__' && isObject(value.config)) return ref(value.config.keras_history, nested);
  if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number' && typeof value[2] === 'number') {
    return [value[0], value[1] + (nested.has(value[0]) ? 1 : 0), value[2]];
  }
  return undefined;
}

function tensors(value: unknown, nested: Set<string>, found: Ref[] = [], depth = 0): Ref[] {
  const r = ref(value, nested);
  if (r) found.push(r);
  else if (Array.isArray(value) && depth < 16) value.forEach((v) => tensors(v, nested, found, depth + 1));
  return found;
}

function refList(value: unknown, nested: Set<string>): Ref[] {
  const single = ref(value, nested);
  return single ? [single] : Array.isArray(value) ? value.flatMap((v) => tensors(v, nested)) : [];
}

/** Keras 3 calls `{args, kwargs}`: tensors in args, then attention's `value`/`key` kwargs; other kwargs ride along. */
function nodes(value: unknown, nested: Set<string>): unknown[] {
  if (!Array.isArray(value)) return [];
  return value.map((call) => {
    if (!isObject(call)) return call;
    const kwargs = isObject(call.kwargs) ? call.kwargs : {};
    const refs = [...tensors(call.args, nested), ...['value', 'key'].flatMap((k) => (kwargs[k] === undefined ? [] : tensors(kwargs[k], nested)))];
    const rest = Object.fromEntries(Object.entries(kwargs).filter(([k, v]) => k !== 'value' && k !== 'key' && tensors(v, nested).length === 0));
    return refs.map((r, i) => [...r, i === 0 ? rest : {}]);
  });
}
