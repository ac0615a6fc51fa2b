import * as tf from '@tensorflow/tfjs-core';
import type { Activation, LayerNode } from '../../engine/model/graph.js';
import { glorotUniform } from './init.js';

/** A trainable tensor of a layer, named `<layerId>/<kernel|bias>`. */
export interface ParamSpec {
  name: string;
  shape: number[];
  init: Float32Array;
}

function activate(x: tf.Tensor, activation: Activation): tf.Tensor {
  if (activation === 'relu') return tf.relu(x);
  if (activation === 'softmax') return tf.softmax(x);
  return x;
}

/** The parameters a layer owns, with their deterministic initial values. */
export function layerParams(layer: LayerNode, inputShape: number[], seed: number): ParamSpec[] {
  const spec = layer.spec;
  if (spec.kind === 'dense') {
    const fanIn = inputShape[0];
    return [
      { name: `${layer.id}/kernel`, shape: [fanIn, spec.units], init: glorotUniform(seed, layer.id, 'kernel', [fanIn, spec.units], fanIn, spec.units) },
      { name: `${layer.id}/bias`, shape: [spec.units], init: new Float32Array(spec.units) },
    ];
  }
  if (spec.kind === 'conv2d') {
    const [kh, kw] = spec.kernelSize;
    const c = inputShape[2];
    const shape = [kh, kw, c, spec.filters];
    return [
      { name: `${layer.id}/kernel`, shape, init: glorotUniform(seed, layer.id, 'kernel', shape, kh * kw * c, kh * kw * spec.filters) },
      { name: `${layer.id}/bias`, shape: [spec.filters], init: new Float32Array(spec.filters) },
    ];
  }
  return [];
}

/**
 * Forward computation of one layer on a batch. `params` are the layer's tensors in the order
 * `layerParams` returns them. Pure tfjs ops, so tfjs's autodiff provides the backward pass.
 */
export function applyLayer(layer: LayerNode, x: tf.Tensor, params: tf.Tensor[]): tf.Tensor {
  const spec = layer.spec;
  switch (spec.kind) {
    case 'input':
      return x;
    case 'dense':
      return activate(tf.add(tf.matMul(x as tf.Tensor2D, params[0] as tf.Tensor2D), params[1]), spec.activation);
    case 'conv2d': {
      const y = tf.conv2d(x as tf.Tensor4D, params[0] as tf.Tensor4D, spec.strides, spec.padding);
      return activate(tf.add(y, params[1]), spec.activation);
    }
    case 'maxPool2d':
      return tf.maxPool(x as tf.Tensor4D, spec.poolSize, spec.strides, 'valid');
    case 'flatten':
      return tf.reshape(x, [x.shape[0], -1]);
    case 'reshape':
      return tf.reshape(x, [x.shape[0], ...spec.targetShape]);
    default:
      throw new Error(
        `Layer kind "${spec.kind}" (layer "${layer.id}") cannot be executed by the agents yet; plan and price it, or train a model built from dense, conv2d, maxPool2d, flatten and reshape layers.`,
      );
  }
}
