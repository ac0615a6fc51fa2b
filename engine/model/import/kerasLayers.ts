import { LIMITS } from '../../plan/limits.js';
import type { Activation, LayerSpec, RecurrentSpec } from '../layerSpec.js';
import { activationName, bool, choice, ConfigError, isObject, num, preview, read, size, UnsupportedOption, type Json } from './configValues.js';
import { convSpec, croppingSpec, depthwiseSpec, globalPoolSpec, poolSpec, separableSpec, transposeSpec, upSamplingSpec, zeroPaddingSpec } from './kerasConvLayers.js';

/** Keras axes count the batch dimension; Shoal's shapes do not. Negative axes mean the same in both. */
const withoutBatch = (axis: number) => (axis > 0 ? axis - 1 : axis);

function axesOf(config: Json, fallback: number): number[] {
  const value = read(config, 'axis') ?? fallback;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((a) => typeof a === 'number' && Number.isInteger(a))) throw new ConfigError(`"axis" should be an integer or a list of them, got ${preview(value)}.`);
  return (list as number[]).map(withoutBatch);
}

function denseSpec(config: Json, input: number[] | undefined): LayerSpec {
  const units = size(config, 'units');
  const useBias = bool(config, 'use_bias', true);
  const activation = activationName(config);
  if (input?.length === 1 && useBias && ['linear', 'relu', 'softmax'].includes(activation)) {
    return { kind: 'dense', units, activation: activation as Activation };
  }
  return { kind: 'denseNd', units, useBias, activation };
}

function recurrentSpec(cell: RecurrentSpec['cell'], config: Json): RecurrentSpec {
  // tfjs cannot build GRU with reset_after and writes `false`; Keras 2 and 3 write it explicitly too.
  const resetAfter = cell === 'gru' ? bool(config, 'reset_after', false) : false;
  return { kind: 'recurrent', cell, units: size(config, 'units'), returnSequences: bool(config, 'return_sequences', false), useBias: bool(config, 'use_bias', true), resetAfter };
}

const RECURRENT: Record<string, RecurrentSpec['cell']> = { LSTM: 'lstm', GRU: 'gru', SimpleRNN: 'simpleRnn' };

/** A wrapped layer (Bidirectional, TimeDistributed): `{ class_name, config }` under "layer". */
function innerLayer(config: Json): { className: string; config: Json } {
  const layer = read(config, 'layer');
  if (!isObject(layer) || typeof layer.class_name !== 'string') throw new ConfigError('"layer" should hold the wrapped layer\'s class_name and config.');
  return { className: layer.class_name, config: isObject(layer.config) ? layer.config : {} };
}

function reshapeSpec(config: Json, input: number[] | undefined): LayerSpec {
  const target = read(config, 'target_shape');
  if (!Array.isArray(target) || !target.every((d) => typeof d === 'number' && Number.isInteger(d))) throw new ConfigError(`"target_shape" should be a list of integers, got ${preview(target)}.`);
  const unknown = target.filter((d) => d === -1).length;
  if (unknown === 0 || !input) return { kind: 'reshape', targetShape: [...target] };
  // Resolve Keras's one -1 axis from the input's element count.
  const known = target.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const elements = input.reduce((a, b) => a * b, 1);
  if (unknown > 1 || elements % known !== 0) throw new ConfigError(`target_shape [${target}] cannot be resolved for an input of shape [${input}].`);
  return { kind: 'reshape', targetShape: target.map((d) => (d === -1 ? elements / known : d)) };
}

function attentionSpec(config: Json): LayerSpec {
  const keyDim = size(config, 'key_dim');
  const output = read(config, 'output_shape');
  const outputDim = typeof output === 'number' ? output : Array.isArray(output) && output.length === 1 && typeof output[0] === 'number' ? output[0] : undefined;
  if (output !== undefined && outputDim === undefined) throw new UnsupportedOption(`output_shape ${preview(output)} is not supported; give one integer.`);
  const spec: LayerSpec = { kind: 'multiHeadAttention', numHeads: size(config, 'num_heads'), keyDim, valueDim: size(config, 'value_dim', keyDim), useBias: bool(config, 'use_bias', true), causal: false };
  if (outputDim !== undefined) spec.outputDim = outputDim;
  return spec;
}

const MERGES = { Add: 'add', Subtract: 'subtract', Multiply: 'multiply', Average: 'average', Maximum: 'maximum', Minimum: 'minimum' } as const;
const ACTIVATION_LAYERS: Record<string, string> = { ReLU: 'relu', Softmax: 'softmax', LeakyReLU: 'leaky_relu', ELU: 'elu' };

/**
 * The LayerSpec of a Keras layer given its input shapes (batch excluded), or undefined for a class
 * Shoal does not know. Throws ConfigError when the config is malformed or uses an unsupported option.
 */
export function kerasLayerSpec(className: string, config: Json, inputs: number[][], depth = 0): LayerSpec | undefined {
  const input = inputs[0];
  if (className in MERGES) return { kind: 'merge', op: MERGES[className as keyof typeof MERGES] };
  if (className in ACTIVATION_LAYERS) return { kind: 'activation', activation: ACTIVATION_LAYERS[className] };
  if (className in RECURRENT) {
    if (bool(config, 'return_state', false)) throw new UnsupportedOption('return_state adds outputs Shoal does not model.');
    return recurrentSpec(RECURRENT[className], config);
  }
  switch (className) {
    case 'Dense':
      return denseSpec(config, input);
    case 'Conv1D':
      return convSpec(1, config);
    case 'Conv2D':
      return convSpec(2, config);
    case 'DepthwiseConv2D':
      return depthwiseSpec(config);
    case 'SeparableConv2D':
      return separableSpec(config);
    case 'Conv2DTranspose':
      return transposeSpec(config);
    case 'MaxPooling1D':
    case 'MaxPool1D':
      return poolSpec('max', 1, config);
    case 'MaxPooling2D':
    case 'MaxPool2D':
      return poolSpec('max', 2, config);
    case 'AveragePooling1D':
    case 'AvgPool1D':
      return poolSpec('avg', 1, config);
    case 'AveragePooling2D':
    case 'AvgPool2D':
      return poolSpec('avg', 2, config);
    case 'GlobalMaxPooling1D':
    case 'GlobalMaxPool1D':
      return globalPoolSpec('max', 1, config);
    case 'GlobalMaxPooling2D':
    case 'GlobalMaxPool2D':
      return globalPoolSpec('max', 2, config);
    case 'GlobalAveragePooling1D':
    case 'GlobalAvgPool1D':
      return globalPoolSpec('avg', 1, config);
    case 'GlobalAveragePooling2D':
    case 'GlobalAvgPool2D':
      return globalPoolSpec('avg', 2, config);
    case 'BatchNormalization': {
      const [axis] = axesOf(config, -1);
      return { kind: 'batchNorm', axis, center: bool(config, 'center', true), scale: bool(config, 'scale', true) };
    }
    case 'LayerNormalization':
      return { kind: 'layerNorm', axes: axesOf(config, -1), center: bool(config, 'center', true), scale: bool(config, 'scale', true) };
    case 'Dropout':
    case 'SpatialDropout1D':
    case 'SpatialDropout2D':
      return { kind: 'dropout', rate: num(config, 'rate', 0) };
    case 'Flatten':
      return { kind: 'flatten' };
    case 'Reshape':
      return reshapeSpec(config, input);
    case 'Permute': {
      const dims = read(config, 'dims');
      if (!Array.isArray(dims) || !dims.every((d) => typeof d === 'number')) throw new ConfigError(`"dims" should be a list of axes, got ${preview(dims)}.`);
      return { kind: 'permute', dims: [...dims] };
    }
    case 'Activation':
      return { kind: 'activation', activation: activationName(config) };
    case 'Embedding':
      return { kind: 'embedding', inputDim: size(config, 'input_dim'), outputDim: size(config, 'output_dim') };
    case 'Bidirectional': {
      const inner = innerLayer(config);
      const cell = RECURRENT[inner.className];
      if (!cell) throw new UnsupportedOption(`Bidirectional wraps a ${inner.className}; Shoal models LSTM, GRU and SimpleRNN there.`);
      if (read(config, 'merge_mode') === undefined) throw new UnsupportedOption('merge_mode null returns two outputs, which Shoal does not model.');
      const mergeMode = choice(config, 'merge_mode', ['concat', 'sum', 'mul', 'ave'] as const, 'concat');
      return { kind: 'bidirectional', layer: recurrentSpec(cell, inner.config), mergeMode };
    }
    case 'TimeDistributed': {
      const inner = innerLayer(config);
      // Wrappers nest by recursion: a file nesting thousands would overflow the stack.
      if (depth >= LIMITS.nestingDepth) throw new ConfigError(`TimeDistributed wrappers nest more than ${LIMITS.nestingDepth} deep.`);
      const layer = kerasLayerSpec(inner.className, inner.config, input ? [input.slice(1)] : [], depth + 1);
      if (!layer) throw new UnsupportedOption(`TimeDistributed wraps a ${inner.className}, which Shoal does not know.`);
      return { kind: 'timeDistributed', layer };
    }
    case 'Concatenate':
      return { kind: 'concatenate', axis: axesOf(config, -1)[0] };
    case 'ZeroPadding2D':
      return zeroPaddingSpec(config);
    case 'UpSampling2D':
      return upSamplingSpec(config);
    case 'Cropping2D':
      return croppingSpec(config);
    case 'Cropping1D': {
      const value = read(config, 'cropping') ?? 1;
      const pair = typeof value === 'number' ? [value, value] : value;
      if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((v) => typeof v === 'number')) throw new ConfigError(`"cropping" should be n or [start, end], got ${preview(value)}.`);
      return { kind: 'cropping1d', cropping: [pair[0], pair[1]] };
    }
    case 'MultiHeadAttention':
      return attentionSpec(config);
    default:
      return undefined;
  }
}
