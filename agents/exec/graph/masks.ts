import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { ModelGraph } from '../../../engine/model/graph.js';
import { layerOfNode } from './layersModel.js';

/**
 * Keras masks (`Embedding(mask_zero=true)`, `Masking`), propagated as tfjs-layers' executor does in
 * `model.fit`: a layer that supports masking computes its output's mask from its inputs and their
 * masks (`computeMask`); any other layer drops the mask; a layer whose inputs carry a mask gets the
 * first input's as its `mask` argument (RNNs then skip masked steps). Masks are tensors beside the
 * values, under their own key in a stage's tensors, and cross a pipeline cut as extra columns of the
 * packed rows (0/1 floats): a mask is data-dependent and may come from layers of an earlier stage
 * (an Embedding on stage 1, its GRU on stage 2), so the receiving stage could not recompute it.
 */
export const maskKey = (id: string): string => `${id}#mask`;

/** tfjs's element-wise merge layers, whose computeMask Shoal does not take (see outputMask). */
const ELEMENTWISE_MERGES = new Set(['Add', 'Multiply', 'Average', 'Maximum', 'Minimum']);

/**
 * The mask a layer call's output carries (null: none), given its inputs and their masks: tfjs's rule,
 * but for one measured bug. tfjs 4.22's element-wise Merge.computeMask returns the first input's mask
 * with an extra leading axis ([1, rows, T]) instead of Keras's logical AND of all of them, and an RNN
 * fed that mask then behaves differently for every batch size — no plan could be equal to one
 * process on it. Shoal takes Keras's AND there (the inputs without a mask left out).
 */
export function outputMask(layer: tfl.layers.Layer, inputs: tf.Tensor[], masks: Array<tf.Tensor | null>): tf.Tensor | null {
  if (!layer.supportsMasking) return null;
  if (ELEMENTWISE_MERGES.has(layer.getClassName())) {
    const present = masks.filter((m): m is tf.Tensor => m !== null);
    return present.length === 0 ? null : present.reduce((a, b) => tf.logicalAnd(a, b));
  }
  // tfjs's executor hands computeMask every input's mask, null where an input has none.
  const mask = layer.computeMask(inputs, masks as tf.Tensor[]);
  return (Array.isArray(mask) ? mask[0] : mask) ?? null;
}

/** The `mask` argument of a call: its first input's mask, when any input carries one (as tfjs passes it). */
export function callMask(masks: Array<tf.Tensor | null>): tf.Tensor | null {
  return masks.some((m) => m) ? masks[0] : null;
}

/**
 * Which tensors of the graph carry a mask, with the mask's shape (batch excluded). Whether a tensor
 * has a mask is a matter of the layers, not the data, so each layer's own computeMask answers it on
 * a one-row probe of zeros: nothing about masks is re-derived here.
 */
export function maskShapes(graph: ModelGraph, model: tfl.LayersModel): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  tf.tidy(() => {
    const probes = new Map<string, tf.Tensor>();
    const valueShapes = new Map(graph.layers.map((l) => [l.id, l.outputShape]));
    for (const node of graph.layers) {
      if (node.spec.kind === 'input') continue;
      const masks = node.inputs.map((id) => probes.get(id) ?? null);
      const inputs = node.inputs.map((id) => tf.zeros([1, ...valueShapes.get(id)!]));
      const mask = outputMask(layerOfNode(model, node.id), inputs, masks);
      if (!mask) continue;
      probes.set(node.id, mask);
      shapes.set(node.id, mask.shape.slice(1));
    }
  });
  return shapes;
}
