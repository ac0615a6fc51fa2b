import type { LayerSpec, RecurrentSpec } from '../layerSpec.js';
import { product } from './common.js';
import type { KeptElements } from './kept.js';

/**
 * What TensorFlow.js itself holds for one layer's forward and backward pass under one tape, per
 * sample, in elements — more than the minimum a backward pass needs (engine/model/facts/kept.ts,
 * Korthikanti et al.'s count), because tfjs 4.22's engine keeps a copy of every tensor a kernel saves
 * for its gradient (a clone: a copy on the wasm backend) and every gradient it computes until the
 * whole backward pass ends. Measured on the agents' wasm backend, one layer at a time under
 * `tf.engine().gradients` with the tensor high-water mark (agents/runtime/memoryWatermark.ts), at two
 * batch sizes (the slope is per sample): a Dense layer 784→256 holds 2·in + 4·out (a fused matMul
 * saving its input and output, the activation's mask, the gradients of input and pre-activation); on
 * a sequence (a reshape around an unfused matMul) 2·in + 7·out; a convolution 2·in + 6·out; max
 * pooling 2·in + 2·out; average pooling 4·in + out; an Embedding 3·out; a LayerNormalization
 * (moments and broadcasts, op by op) 29·in; an LSTM 63 per unit and time step; a self-attention
 * layer (16 tokens, 4 heads of 8) 9 times its projections, scores and context.
 */
export interface TapeElements {
  /** Per sample. */
  perSample: number;
  /** Independent of the batch: weight gradients a recurrent layer adds up once per time step. */
  fixed: number;
}

const NONE: TapeElements = { perSample: 0, fixed: 0 };
const GATES: Record<RecurrentSpec['cell'], number> = { lstm: 4, gru: 3, simpleRnn: 1 };

/** An LSTM holds 63 elements per unit and step (6 tensors of gates and states, ~10 each); other cells in proportion. */
function recurrentTape(spec: RecurrentSpec, input: number[], params: number): TapeElements {
  const [steps] = input;
  const perUnitStep = (63 / (GATES.lstm + 2)) * (GATES[spec.cell] + 2);
  // Each step's kernel gradients (input, recurrent, bias) are new tensors, summed at the end.
  return { perSample: product(input) + steps * spec.units * perUnitStep, fixed: 3 * steps * params };
}

export function tapeElements(spec: LayerSpec, inputs: number[][], outputShape: number[], kept: KeptElements, params: number): TapeElements {
  const input = product(inputs[0] ?? []);
  const output = product(outputShape);
  const perSample = (n: number): TapeElements => ({ perSample: n, fixed: 0 });
  switch (spec.kind) {
    case 'input':
      return NONE;
    case 'flatten':
    case 'reshape':
      // A view of its input; its gradient a view of its output's.
      return NONE;
    case 'permute':
    case 'positionEmbedding':
    case 'zeroPadding2d':
    case 'cropping1d':
    case 'cropping2d':
    case 'concatenate':
      // Its output is (or shares) its input; its gradient is one tensor of the input's size.
      return perSample(inputs.reduce((n, s) => n + product(s), 0));
    case 'dense':
      return perSample(2 * input + 4 * output);
    case 'denseNd':
      return perSample(2 * input + ((inputs[0]?.length ?? 1) > 1 ? 7 : 4) * output);
    case 'conv2d':
    case 'conv':
    case 'depthwiseConv2d':
    case 'separableConv2d':
    case 'conv2dTranspose':
      return perSample(2 * input + 6 * output);
    case 'maxPool2d':
      return perSample(2 * input + 2 * output);
    case 'pool':
    case 'globalPool':
      return perSample(spec.op === 'max' ? 2 * input + 2 * output : 4 * input + output);
    case 'embedding':
      return perSample(3 * output);
    case 'batchNorm':
    case 'layerNorm':
      return perSample(29 * input);
    case 'recurrent':
      return recurrentTape(spec, inputs[0], params);
    case 'bidirectional': {
      const one = recurrentTape(spec.layer, inputs[0], params / 2);
      return { perSample: 2 * one.perSample, fixed: 2 * one.fixed };
    }
    case 'timeDistributed': {
      const [steps, ...rest] = inputs[0];
      const inner = tapeElements(spec.layer, [rest], outputShape.slice(1), kept, params);
      return { perSample: steps * inner.perSample, fixed: inner.fixed };
    }
    case 'multiHeadAttention':
      return perSample(9 * kept.internal);
    case 'dropout':
    case 'activation':
      // A mask (or the activation's output), the product, and the gradient.
      return perSample(3 * output);
    case 'merge':
    case 'upSampling2d':
    case 'opaque':
    case 'tfjsLayer':
      // The gradient of each input and of the output, and what the backward reads.
      return perSample(inputs.reduce((n, s) => n + product(s), 0) + output + kept.inputs + kept.internal);
  }
}
