import type { LayerSpec, RecurrentSpec } from '../layerSpec.js';
import { product } from './common.js';

/**
 * Elements of one sample a layer keeps from its forward pass until its backward pass, by what they
 * are: its inputs (what a weight gradient or a norm's backward reads), tensors it makes inside
 * (pre-activations, attention's projections and scores), and dropout masks (1 byte each in Megatron,
 * a float32 tensor in tfjs). Tensor parallelism splits them differently, so they stay apart.
 */
export interface KeptElements {
  inputs: number;
  internal: number;
  masks: number;
}

export const NOTHING_KEPT: KeptElements = { inputs: 0, internal: 0, masks: 0 };

const GATES: Record<RecurrentSpec['cell'], number> = { lstm: 4, gru: 3, simpleRnn: 1 };

/** A non-linear activation's backward reads its input (or output): one more tensor of the output's size. */
const activationKeeps = (activation: string, output: number) => (activation === 'linear' ? 0 : output);

/**
 * What a layer keeps for its backward pass, following Korthikanti et al. ("Reducing Activation
 * Recomputation in Large Transformer Models", 2022): a matmul keeps its input, a norm its input, a
 * dropout its mask, attention its input, Q, K, V, the softmax output and the context, an element-wise
 * add nothing. `inputIds` tell a self-attention's repeated input from distinct ones (kept once).
 */
export function keptForBackward(
  spec: LayerSpec,
  inputs: number[][],
  outputShape: number[],
  inputIds: string[] = [],
): KeptElements {
  const input = inputs[0] ?? [];
  const output = product(outputShape);
  const kept = (inputsKept: number, internal = 0, masks = 0): KeptElements => ({ inputs: inputsKept, internal, masks });
  switch (spec.kind) {
    case 'input':
    case 'positionEmbedding':
    case 'flatten':
    case 'reshape':
    case 'permute':
    case 'zeroPadding2d':
    case 'cropping1d':
    case 'cropping2d':
    case 'upSampling2d':
    case 'concatenate':
    case 'opaque':
      return NOTHING_KEPT;
    case 'dense':
    case 'denseNd':
    case 'conv2d':
    case 'conv':
    case 'depthwiseConv2d':
    case 'separableConv2d':
    case 'conv2dTranspose':
      return kept(product(input), activationKeeps(spec.activation, output));
    case 'embedding':
      return kept(product(input));
    case 'maxPool2d':
      return kept(product(input), output);
    case 'pool':
    case 'globalPool':
      return spec.op === 'max' ? kept(product(input), output) : NOTHING_KEPT;
    case 'batchNorm':
    case 'layerNorm':
      return kept(product(input));
    case 'dropout':
      return kept(0, 0, product(input));
    case 'activation':
      return kept(0, output);
    case 'merge':
      // A sum's gradient needs no values; a product's, maximum's or minimum's reads every input.
      if (spec.op === 'add' || spec.op === 'subtract' || spec.op === 'average') return NOTHING_KEPT;
      return kept(inputs.reduce((n, s) => n + product(s), 0));
    case 'tfjsLayer':
      // Nothing known of its insides: assume its backward reads its inputs, as most layers' do.
      return kept(inputs.reduce((n, s) => n + product(s), 0));
    case 'recurrent':
      return recurrentKept(spec, input);
    case 'bidirectional': {
      const one = recurrentKept(spec.layer, input);
      return kept(one.inputs, 2 * one.internal);
    }
    case 'timeDistributed': {
      const [steps, ...rest] = input;
      const inner = keptForBackward(spec.layer, [rest], outputShape.slice(1));
      return kept(steps * inner.inputs, steps * inner.internal, steps * inner.masks);
    }
    case 'multiHeadAttention':
      return attentionKept(spec, inputs, inputIds);
  }
}

/** Backpropagation through time keeps, per step, the gates, the cell state and the hidden state. */
function recurrentKept(spec: RecurrentSpec, input: number[]): KeptElements {
  const [steps] = input;
  return { inputs: product(input), internal: steps * (GATES[spec.cell] + 2) * spec.units, masks: 0 };
}

type AttentionSpec = Extract<LayerSpec, { kind: 'multiHeadAttention' }>;

/** Q, K, V, the h·tq·tk softmax output (the s² term) and the context that enters the output projection. */
function attentionKept(spec: AttentionSpec, inputs: number[][], ids: string[]): KeptElements {
  const [[tq, dq], [tv, dv]] = inputs;
  const [tk, dk] = inputs[2] ?? inputs[1];
  const { numHeads: h, keyDim: k, valueDim: v } = spec;
  const distinct = (i: number) => ids.length === 0 || !ids.slice(0, i).includes(ids[i]);
  const inputsKept = tq * dq + (distinct(1) ? tv * dv : 0) + (inputs[2] && distinct(2) ? tk * dk : 0);
  return { inputs: inputsKept, internal: tq * h * k + tk * h * k + tv * h * v + h * tq * tk + tq * h * v, masks: 0 };
}
