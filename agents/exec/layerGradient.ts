import * as tf from '@tensorflow/tfjs-core';
import type { LayerNode } from '../../engine/model/graph.js';
import { applyLayer } from './layerOps.js';

/**
 * One layer's backward pass: the gradient of its input (null when `needInput` is false) and of its
 * parameters, given its input x, its output y and the gradient dy of the output.
 *
 * tfjs differentiates by re-running a function's forward pass to record a tape, so asking tf.grads
 * for a layer costs a forward pass again. Dense layers — most of the work in the models the agents
 * train — are differentiated by hand instead from the kept input and output, with the very ops
 * tfjs's own gradients use (so results are identical): no recomputation, and no input gradient where
 * none is wanted (the first layer of the first stage).
 */
export function layerGradient(layer: LayerNode, x: tf.Tensor, y: tf.Tensor, dy: tf.Tensor, params: tf.Tensor[], needInput: boolean): { dx: tf.Tensor | null; dParams: tf.Tensor[] } {
  const spec = layer.spec;
  if (spec.kind === 'input') return { dx: needInput ? dy.clone() : null, dParams: [] };
  // Inside tidy: the input gradient first when wanted, then the parameters' gradients.
  const out = tf.tidy(() => {
    if (spec.kind === 'dense' && (spec.activation === 'relu' || spec.activation === 'linear')) {
      // relu'(z) is 1 where z > 0, which is exactly where relu(z) = y > 0.
      const dz = spec.activation === 'relu' ? tf.mul(dy, tf.step(y)) : dy;
      const dKernel = tf.matMul(x as tf.Tensor2D, dz as tf.Tensor2D, true, false);
      const dBias = tf.sum(dz, 0);
      return needInput ? [tf.matMul(dz as tf.Tensor2D, params[0] as tf.Tensor2D, false, true), dKernel, dBias] : [dKernel, dBias];
    }
    const [dx, ...dParams] = tf.grads((input: tf.Tensor, ...p: tf.Tensor[]) => applyLayer(layer, input, p))([x, ...params], dy);
    return needInput ? [dx, ...dParams] : dParams;
  });
  return needInput ? { dx: out[0], dParams: out.slice(1) } : { dx: null, dParams: out };
}
