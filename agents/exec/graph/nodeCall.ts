import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { LayerNode } from '../../../engine/model/graph.js';
import type { BatchNormStatistics } from './batchNormStatistics.js';
import { dropoutMask, type PassRows } from './dropoutMask.js';

/** Layer classes whose randomness Shoal draws itself (dropoutMask), by the axes one draw covers. */
const DROPOUT_BROADCAST: Record<string, (rank: number) => number[]> = {
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

/** How a layer call runs: training or inference, and what a training call records. */
export interface CallMode {
  training: boolean;
  /** The rows of the micro-batch (deterministic dropout); null outside training. */
  pass: PassRows | null;
  /** Record batch-norm slice statistics here (the first training pass of a micro-batch only). */
  batchNorm?: BatchNormStatistics;
}

/**
 * One call of a graph node's tfjs-layers layer on its input tensors: ops only (the caller tidies or
 * tapes). tfjs-layers computes the layer; Shoal replaces what must not depend on the plan: dropout
 * masks drawn from (seed, step, sample, layer), batch-norm statistics recorded per slice, and
 * attention's causal mask and dropout read from the saved call. `mask` is the call's Keras mask
 * (masks.ts: the first input's), given to the layer as tfjs's executor gives it.
 */
export function callNode(node: LayerNode, layer: tfl.layers.Layer, inputs: tf.Tensor[], mode: CallMode, mask: tf.Tensor | null = null): tf.Tensor {
  const { training, pass } = mode;
  const dropout = DROPOUT_BROADCAST[layer.getClassName()];
  if (dropout) {
    const rate = (layer as unknown as { rate: number }).rate;
    if (!training || rate <= 0) return inputs[0];
    if (!pass) throw new Error(`Layer "${node.id}" (dropout) ran in training without the rows of its micro-batch.`);
    return tf.mul(inputs[0], dropoutMask(inputs[0].shape, rate, node.id, pass, dropout(inputs[0].rank)));
  }
  if (training && mode.batchNorm?.isTracked(layer)) mode.batchNorm.record(layer, inputs[0]);
  if (node.spec.kind === 'multiHeadAttention') {
    // The layer is multiHeadAttention.ts's (registered in place of tfjs's).
    const [query, value, key] = inputs;
    const useCausalMask = attentionIsCausal(node, layer);
    // Attention dropout: Shoal's deterministic mask over the scores [rows, heads, T, S].
    const rate = (layer as unknown as { dropout?: number }).dropout ?? 0;
    let attentionDropoutMask: ((shape: number[]) => tf.Tensor) | undefined;
    if (training && rate > 0) {
      if (!pass) throw new Error(`Layer "${node.id}" (attention dropout) ran in training without the rows of its micro-batch.`);
      attentionDropoutMask = (shape) => dropoutMask(shape, rate, node.id, pass);
    }
    return layer.apply(query, { value, key, useCausalMask, training, attentionDropoutMask }) as tf.Tensor;
  }
  // The input's Keras mask (masks.ts), as tfjs's executor passes it.
  const out = layer.apply(inputs.length === 1 ? inputs[0] : inputs, mask ? { training, mask } : { training });
  return (Array.isArray(out) ? out[0] : out) as tf.Tensor;
}
