import type { Activation, LayerSpec, Padding } from '../layerSpec.js';
import { activationName, bool, choice, ConfigError, int, ints, preview, read, size, UnsupportedOption, type Json } from './configValues.js';

const PADDINGS = ['same', 'valid'] as const;
const AGENT_ACTIVATIONS: readonly string[] = ['linear', 'relu', 'softmax'] satisfies Activation[];

/** Only channels-last data is modelled; a channels-first layer becomes opaque with this reason. */
function requireChannelsLast(config: Json): void {
  const format = read(config, 'data_format');
  if (format !== undefined && format !== 'channels_last') throw new UnsupportedOption(`data_format ${preview(format)} is not supported; Shoal models channels_last.`);
}

/** Conv1D and Conv2D: the agents' `conv2d` when it fits exactly, the general `conv` otherwise. */
export function convSpec(rank: 1 | 2, config: Json): LayerSpec {
  requireChannelsLast(config);
  if (int(config, 'groups', 1) !== 1) throw new UnsupportedOption('grouped convolutions (groups > 1) are not supported.');
  const filters = size(config, 'filters');
  const kernelSize = ints(config, 'kernel_size', rank);
  const strides = ints(config, 'strides', rank, 1);
  const dilation = ints(config, 'dilation_rate', rank, 1);
  const padding = choice(config, 'padding', rank === 1 ? (['same', 'valid', 'causal'] as const) : PADDINGS, 'valid');
  const useBias = bool(config, 'use_bias', true);
  const activation = activationName(config);
  if (rank === 2 && padding !== 'causal' && useBias && dilation.every((d) => d === 1) && AGENT_ACTIVATIONS.includes(activation)) {
    const pair = (v: number[]): [number, number] => [v[0], v[1]];
    return { kind: 'conv2d', filters, kernelSize: pair(kernelSize), strides: pair(strides), padding, activation: activation as Activation };
  }
  return { kind: 'conv', rank, filters, kernelSize, strides, dilation, padding, useBias, activation };
}

const pair2 = (config: Json, key: string, fallback?: number): [number, number] => ints(config, key, 2, fallback) as [number, number];

/** Fields DepthwiseConv2D and SeparableConv2D share. */
function depthwiseFields(config: Json) {
  requireChannelsLast(config);
  return {
    kernelSize: pair2(config, 'kernel_size'),
    strides: pair2(config, 'strides', 1),
    dilation: pair2(config, 'dilation_rate', 1),
    padding: choice(config, 'padding', PADDINGS, 'valid'),
    depthMultiplier: int(config, 'depth_multiplier', 1),
    useBias: bool(config, 'use_bias', true),
    activation: activationName(config),
  };
}

export function depthwiseSpec(config: Json): LayerSpec {
  return { kind: 'depthwiseConv2d', ...depthwiseFields(config) };
}

export function separableSpec(config: Json): LayerSpec {
  return { kind: 'separableConv2d', filters: size(config, 'filters'), ...depthwiseFields(config) };
}

export function transposeSpec(config: Json): LayerSpec {
  requireChannelsLast(config);
  if (read(config, 'output_padding') !== undefined) throw new UnsupportedOption('output_padding is not supported.');
  if (pair2(config, 'dilation_rate', 1).some((d) => d !== 1)) throw new UnsupportedOption('dilated transposed convolutions are not supported.');
  return {
    kind: 'conv2dTranspose',
    filters: size(config, 'filters'),
    kernelSize: pair2(config, 'kernel_size'),
    strides: pair2(config, 'strides', 1),
    padding: choice(config, 'padding', PADDINGS, 'valid'),
    useBias: bool(config, 'use_bias', true),
    activation: activationName(config),
  };
}

/** Max and average pooling; strides default to the pool size. Valid 2-D max pooling is the agents'. */
export function poolSpec(op: 'max' | 'avg', rank: 1 | 2, config: Json): LayerSpec {
  requireChannelsLast(config);
  const poolSize = ints(config, 'pool_size', rank, 2);
  const strides = ints(config, 'strides', rank, poolSize);
  const padding: Padding = choice(config, 'padding', PADDINGS, 'valid');
  if (op === 'max' && rank === 2 && padding === 'valid') {
    return { kind: 'maxPool2d', poolSize: [poolSize[0], poolSize[1]], strides: [strides[0], strides[1]] };
  }
  return { kind: 'pool', op, rank, poolSize, strides, padding };
}

export function globalPoolSpec(op: 'max' | 'avg', rank: 1 | 2, config: Json): LayerSpec {
  requireChannelsLast(config);
  if (bool(config, 'keepdims', false)) throw new UnsupportedOption('keepdims is not supported.');
  return { kind: 'globalPool', op, rank };
}

/** ZeroPadding2D's padding and Cropping2D's cropping: n, [rows, cols], or [[top, bottom], [left, right]]. */
function sides2d(config: Json, key: string): [[number, number], [number, number]] {
  requireChannelsLast(config);
  const value = read(config, key) ?? (key === 'padding' ? 1 : 0);
  const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
  const side = (v: unknown): [number, number] | undefined => (isInt(v) ? [v, v] : Array.isArray(v) && v.length === 2 && v.every(isInt) ? [v[0], v[1]] : undefined);
  if (isInt(value)) return [[value, value], [value, value]];
  const rows = Array.isArray(value) && value.length === 2 ? side(value[0]) : undefined;
  const cols = Array.isArray(value) && value.length === 2 ? side(value[1]) : undefined;
  if (!rows || !cols) throw new ConfigError(`"${key}" should be n, [rows, cols] or [[top, bottom], [left, right]], got ${preview(value)}.`);
  return [rows, cols];
}

export function zeroPaddingSpec(config: Json): LayerSpec {
  return { kind: 'zeroPadding2d', padding: sides2d(config, 'padding') };
}

export function croppingSpec(config: Json): LayerSpec {
  return { kind: 'cropping2d', cropping: sides2d(config, 'cropping') };
}

export function upSamplingSpec(config: Json): LayerSpec {
  requireChannelsLast(config);
  return { kind: 'upSampling2d', size: pair2(config, 'size', 2) };
}
