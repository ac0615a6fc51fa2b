import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { LayerNode } from '../../../engine/model/graph.js';
import { callNode, type CallMode } from './nodeCall.js';

/** Gradients of one layer call: per input (null where not wanted or not reached) and per parameter. */
export interface NodeGradients {
  inputs: Array<tf.Tensor | null>;
  params: Array<tf.Tensor | null>;
}

/**
 * The backward pass of one layer call from its kept input and output, given the gradient of its
 * output. tfjs records a tape only within one call, so in general the layer's forward runs again
 * under a tape here (one layer, not the stage). A plain Dense layer with a ReLU or no activation is
 * differentiated by hand from its kept input and output instead, which saves that repeat: its
 * backward is two matrix products and a sum. Call inside tf.tidy.
 */
export function nodeBackward(
  node: LayerNode,
  layer: tfl.layers.Layer,
  inputs: tf.Tensor[],
  output: tf.Tensor,
  dy: tf.Tensor,
  params: tf.Variable[],
  wanted: boolean[],
  mode: CallMode,
  mask: tf.Tensor | null = null,
): NodeGradients {
  const dense = denseByHand(layer, inputs, output, dy, params, wanted);
  if (dense) return dense;
  // A tensor read twice by one call (Add([a, a])) is differentiated once: its gradient holds both uses.
  const sources = inputs.filter((t, i) => wanted[i] && inputs.indexOf(t) === i);
  const xs = [...sources, ...params];
  if (xs.length === 0) return { inputs: inputs.map(() => null), params: [] };
  const { grads } = tf.engine().gradients(() => callNode(node, layer, inputs, mode, mask), xs, dy, true);
  const inputGrads = inputs.map((t, i) => (wanted[i] && inputs.indexOf(t) === i ? grads[sources.indexOf(t)] ?? null : null));
  return { inputs: inputGrads, params: grads.slice(sources.length) };
}

/** Dense activations whose derivative the kept output gives exactly. */
const BY_HAND: Record<string, (dy: tf.Tensor, y: tf.Tensor) => tf.Tensor> = {
  linear: (dy) => dy,
  relu: (dy, y) => tf.mul(dy, tf.step(y)),
};

function denseByHand(layer: tfl.layers.Layer, inputs: tf.Tensor[], output: tf.Tensor, dy: tf.Tensor, params: tf.Variable[], wanted: boolean[]): NodeGradients | null {
  if (layer.getClassName() !== 'Dense' || inputs.length !== 1 || inputs[0].rank !== 2) return null;
  const config = layer.getConfig() as { activation?: string; use_bias?: boolean; useBias?: boolean };
  const derivative = BY_HAND[config.activation ?? 'linear'];
  const useBias = config.use_bias ?? config.useBias ?? true;
  // Only the trainable kernel (and bias) in their usual order: anything else goes the general way.
  if (!derivative || params.length !== (useBias ? 2 : 0) || (params.length === 2 && params[0].rank !== 2)) return null;
  const x = inputs[0] as tf.Tensor2D;
  const dz = derivative(dy, output) as tf.Tensor2D;
  const kernel = params[0] as tf.Tensor2D;
  const paramGrads = params.length === 0 ? [] : [tf.matMul(x, dz, true, false), tf.sum(dz, 0)];
  return { inputs: [wanted[0] ? tf.matMul(dz, kernel, false, true) : null], params: paramGrads };
}
