import * as tf from '@tensorflow/tfjs-core';
import type { LayerNode } from '../../engine/model/graph.js';
import { glorotUniform } from './init.js';

/** A trainable tensor of a layer, named `<layerId>/<kernel|bias>`. */
export interface ParamSpec {
  name: string;
  shape: number[];
  init: Float32Array;
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
    // tfjs's fused kernels (product, bias and ReLU in one pass, and one fused gradient), as tfjs-layers' Dense and Conv2D use.
    case 'dense':
      if (spec.activation === 'softmax') return tf.softmax(tf.fused.matMul({ a: x as tf.Tensor2D, b: params[0] as tf.Tensor2D, bias: params[1] }));
      return tf.fused.matMul({ a: x as tf.Tensor2D, b: params[0] as tf.Tensor2D, bias: params[1], activation: spec.activation });
    case 'conv2d': {
      const conv = { x: x as tf.Tensor4D, filter: params[0] as tf.Tensor4D, strides: spec.strides, pad: spec.padding, bias: params[1] };
      return spec.activation === 'softmax' ? tf.softmax(tf.fused.conv2d(conv)) : tf.fused.conv2d({ ...conv, activation: spec.activation });
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
