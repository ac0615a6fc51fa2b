import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { LayerNode } from '../../../engine/model/graph.js';
import { dropoutMask, type PassRows } from './dropoutMask.js';

/** Layer classes whose randomness Shoal draws itself (dropoutMask), by the axes one draw covers. */
export const DROPOUT_BROADCAST: Record<string, (rank: number) => number[]> = {
  Dropout: () => [],
  SpatialDropout1D: () => [1],
  SpatialDropout2D: () => [1, 2],
};

/**
 * Whether an attention call masks future positions: the spec says so, or the saved call does
 * (`use_causal_mask` of the layer's k-th node, for graph id `<layer>@k`).
 */
export function attentionIsCausal(node: LayerNode, layer: tfl.layers.Layer): boolean {
  const call = Number(/@(\d+)$/.exec(node.id)?.[1] ?? 0);
  return (node.spec.kind === 'multiHeadAttention' && node.spec.causal) || layer.inboundNodes[call]?.callArgs?.useCausalMask === true;
}

/**
 * One layer call of a graph node on concrete tensors, with Shoal's deterministic dropout (its mask
 * drawn from `pass`: the global sample index of each row of `inputs`) and attention's causal mask and
 * dropout. Batch-norm statistics are the caller's concern.
 */
export function callLayer(node: LayerNode, layer: tfl.layers.Layer, inputs: tf.Tensor[], training: boolean, pass: PassRows | null): tf.Tensor {
  const dropout = DROPOUT_BROADCAST[layer.getClassName()];
  if (dropout) {
    const rate = (layer as unknown as { rate: number }).rate;
    if (!training || rate <= 0) return inputs[0];
    if (!pass) throw new Error(`Layer "${node.id}" (dropout) ran in training without the rows of its micro-batch.`);
    return tf.mul(inputs[0], dropoutMask(inputs[0].shape, rate, node.id, pass, dropout(inputs[0].rank)));
  }
  if (node.spec.kind === 'multiHeadAttention') {
    const [query, value, key] = inputs;
    const rate = (layer as unknown as { dropout?: number }).dropout ?? 0;
    let attentionDropoutMask: ((shape: number[]) => tf.Tensor) | undefined;
    if (training && rate > 0) {
      if (!pass) throw new Error(`Layer "${node.id}" (attention dropout) ran in training without the rows of its micro-batch.`);
      attentionDropoutMask = (shape) => dropoutMask(shape, rate, node.id, pass);
    }
    return layer.apply(query, { value, key, useCausalMask: attentionIsCausal(node, layer), training, attentionDropoutMask }) as tf.Tensor;
  }
  const out = layer.apply(inputs.length === 1 ? inputs[0] : inputs, { training });
  return (Array.isArray(out) ? out[0] : out) as tf.Tensor;
}
