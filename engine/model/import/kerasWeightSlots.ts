import { isObject, type Json } from './configValues.js';
import { MODEL_CLASSES } from './kerasDocument.js';

/**
 * Where each weight of a Keras model lives in Keras's files, and the name tfjs-layers gives it (the
 * name a tfjs weights manifest, the agents and Shoal's checkpoints use). Facts from Keras's saving
 * code: a Keras 3 `model.weights.h5` stores a layer's variables as `<path>/vars/0..n`, in the order
 * the layer created them, where `<path>` is `layers/<snake_case(class)>` numbered `_1`, `_2`, … among
 * the model's layers of that class (`saving_lib._save_container_state`), a recurrent layer's under its
 * `cell`, a wrapper's under `layer`/`forward_layer`/`backward_layer`, attention's under its
 * `_query_dense`, … projections and a nested model's under its own `layers/…`. A Keras 2 `.h5` lists
 * each layer's weights in its group's `weight_names` (legacy_h5_format.save_weights_to_hdf5_group),
 * a nested model's trainable weights before its non-trainable ones.
 */
export interface WeightSlot {
  /** The model's layer (top level) that holds it: what messages name. */
  layer: string;
  className: string;
  /** tfjs's name: `<layer>/<weight>` (a nested model's layers by their own names). */
  tfjsName: string;
  /** Path in a Keras 3 `model.weights.h5`. */
  keras3Path: string;
  trainable: boolean;
}

const RECURRENT = new Set(['LSTM', 'GRU', 'SimpleRNN']);

/** Keras's `naming.to_snake_case`. */
export function snakeCase(name: string): string {
  return name
    .replace(/\W+/g, '')
    .replace(/(.)([A-Z][a-z]+)/g, '$1_$2')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toLowerCase();
}

/** Every weight slot of a model config (`{class_name, config}`), in layer order. */
export function kerasWeightSlots(model: Json): WeightSlot[] {
  return modelSlots(model, '', null);
}

function layersOf(model: Json): Json[] {
  const config = isObject(model.config) ? model.config : {};
  return Array.isArray(config.layers) ? config.layers.filter(isObject) : [];
}

function nameOf(l: Json): string {
  return String(l.name ?? (isObject(l.config) ? l.config.name : ''));
}

function modelSlots(model: Json, path: string, top: string | null): WeightSlot[] {
  const used = new Map<string, number>();
  const out: WeightSlot[] = [];
  for (const l of layersOf(model)) {
    const className = String(l.class_name);
    const snake = snakeCase(className);
    const n = used.get(snake);
    used.set(snake, n === undefined ? 0 : n + 1);
    const layerPath = `${path}layers/${n === undefined ? snake : `${snake}_${n + 1}`}`;
    const owner = top ?? nameOf(l);
    if (MODEL_CLASSES.has(className)) {
      const inner = modelSlots(l, `${layerPath}/`, owner);
      const frozen = isObject(l.config) && l.config.trainable === false;
      out.push(...inner.map((s) => ({ ...s, trainable: s.trainable && !frozen })));
    } else {
      const frozen = isObject(l.config) && l.config.trainable === false;
      out.push(...layerSlots(className, isObject(l.config) ? l.config : {}, nameOf(l), layerPath).map((s) => ({ layer: owner, className, ...s, trainable: s.trainable && !frozen })));
    }
  }
  return out;
}

type Own = { tfjsName: string; keras3Path: string; trainable: boolean };

/** A plain layer's weights: `names` under `<path>/vars/`, tfjs names under `prefix`. */
function vars(path: string, prefix: string, names: string[]): Own[] {
  return names.map((name, i) => ({ tfjsName: `${prefix}${name}`, keras3Path: `${path}/vars/${i}`, trainable: !name.startsWith('moving_') }));
}

function layerSlots(className: string, config: Json, name: string, path: string): Own[] {
  const bias = config.use_bias === false ? [] : ['bias'];
  const prefix = `${name}/`;
  if (RECURRENT.has(className)) return vars(`${path}/cell`, prefix, ['kernel', 'recurrent_kernel', ...bias]);
  if (className === 'Bidirectional' && isObject(config.layer)) {
    const inner = isObject(config.layer.config) ? config.layer.config : {};
    const innerBias = inner.use_bias === false ? [] : ['bias'];
    const innerName = String(inner.name ?? 'rnn');
    const names = ['kernel', 'recurrent_kernel', ...innerBias];
    return [...vars(`${path}/forward_layer/cell`, `${prefix}forward_${innerName}/`, names), ...vars(`${path}/backward_layer/cell`, `${prefix}backward_${innerName}/`, names)];
  }
  if (className === 'TimeDistributed' && isObject(config.layer)) {
    const inner = isObject(config.layer.config) ? config.layer.config : {};
    return layerSlots(String(config.layer.class_name), inner, name, `${path}/layer`);
  }
  if (className === 'MultiHeadAttention') {
    const projections: Array<[string, string]> = [['_query_dense', 'query'], ['_key_dense', 'key'], ['_value_dense', 'value'], ['_output_dense', 'attention_output']];
    return projections.flatMap(([sub, tfjs]) => vars(`${path}/${sub}`, `${prefix}${tfjs}/`, ['kernel', ...bias]));
  }
  return vars(path, prefix, ownWeights(className, config, bias));
}

function ownWeights(className: string, config: Json, bias: string[]): string[] {
  switch (className) {
    case 'Dense':
    case 'EinsumDense':
    case 'Conv1D':
    case 'Conv2D':
    case 'Conv3D':
    case 'Conv1DTranspose':
    case 'Conv2DTranspose':
    case 'Conv3DTranspose':
      return ['kernel', ...bias];
    case 'DepthwiseConv2D':
    case 'DepthwiseConv1D':
      return ['depthwise_kernel', ...bias];
    case 'SeparableConv1D':
    case 'SeparableConv2D':
      return ['depthwise_kernel', 'pointwise_kernel', ...bias];
    case 'BatchNormalization':
      return [...(config.scale === false ? [] : ['gamma']), ...(config.center === false ? [] : ['beta']), 'moving_mean', 'moving_variance'];
    case 'LayerNormalization':
      return [...(config.scale === false ? [] : ['gamma']), ...(config.center === false ? [] : ['beta'])];
    case 'Embedding':
      return ['embeddings'];
    case 'PReLU':
      return ['alpha'];
    default:
      return [];
  }
}
