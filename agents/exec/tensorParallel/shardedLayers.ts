import * as tf from '@tensorflow/tfjs-core';
import type * as tfl from '@tensorflow/tfjs-layers/dist/index.js';
import type { LayerNode } from '../../../engine/model/graph.js';
import { attentionIsCausal } from '../graph/nodeCall.js';
import { addWithoutBiasGradient, einsumMatMul } from '../graph/multiHeadAttention.js';
import type { PassRows } from '../graph/dropoutMask.js';
import type { ShardedParams } from './shardedParamTable.js';

/**
 * What one shard computes for each split layer, on its slices of the weights (Megatron's layout);
 * the collectives around them are compileGraphStage's.
 */

/** How a pass runs: training or not, and the sample indices of the micro-batch's rows (dropout). */
export interface PassContext {
  training: boolean;
  /** Every row of the micro-batch. */
  pass: PassRows | null;
  /** This shard's rows. */
  ownPass: PassRows | null;
}

interface Activation {
  apply(x: tf.Tensor): tf.Tensor;
}

/** x · W over the last axis of any rank (Keras's Dense), as one 2-D matMul. */
function lastAxisMatMul(x: tf.Tensor, kernel: tf.Tensor): tf.Tensor {
  const [inFeatures, units] = kernel.shape;
  const y = tf.matMul(tf.reshape(x, [-1, inFeatures]) as tf.Tensor2D, kernel as tf.Tensor2D);
  return tf.reshape(y, [...x.shape.slice(0, -1), units]);
}

/** A column-parallel Dense: this shard's units, bias and (elementwise) activation, from the whole input. */
export function columnDense(layer: tfl.layers.Layer, kernel: tf.Variable, bias: tf.Variable | null): (x: tf.Tensor) => tf.Tensor {
  const activation = (layer as unknown as { activation?: Activation }).activation;
  return (x) => {
    const y = lastAxisMatMul(x, kernel);
    const biased = bias ? tf.add(y, bias) : y;
    return activation ? activation.apply(biased) : biased;
  };
}

/** A row-parallel Dense's partial sum: this shard's input features times its rows of the kernel. */
export function rowDensePartial(kernel: tf.Variable): (x: tf.Tensor) => tf.Tensor {
  return (x) => lastAxisMatMul(x, kernel);
}

/** The bias, then the activation, applied once to a summed output. */
export function withBias(bias: tf.Variable, activation: Activation | null): (x: tf.Tensor) => tf.Tensor {
  return (x) => {
    const y = tf.add(x, bias);
    return activation ? activation.apply(y) : y;
  };
}

/**
 * A vocabulary-split embedding's partial lookup: the rows of the ids this shard owns, zeros for the
 * others (one-hot rows outside the slice are all zero), so the sum over shards is the whole lookup.
 * The one-hot is made int32, then cast: asked for float32 directly, the wasm backend's OneHot gave zeros.
 */
export function embeddingPartial(table: tf.Variable, shard: number): (ids: tf.Tensor) => tf.Tensor {
  const [rows, width] = table.shape;
  return (ids) => {
    const local = tf.sub(tf.cast(tf.reshape(ids, [-1]), 'int32'), tf.scalar(shard * rows, 'int32')) as tf.Tensor1D;
    const y = tf.matMul(tf.cast(tf.oneHot(local, rows), 'float32') as tf.Tensor2D, table as tf.Tensor2D);
    return tf.reshape(y, [...ids.shape, width]);
  };
}

interface AttentionLayer {
  queryDense: { equation: string };
  keyDense: { equation: string };
  valueDense: { equation: string };
  outputDense: { equation: string };
  dropout: number;
  computeAttentionMask(query: tf.Tensor, value: tf.Tensor, mask: undefined, causal: boolean): tf.Tensor | undefined;
  computeAttention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, mask: tf.Tensor | undefined, training: boolean): [tf.Tensor, tf.Tensor];
}

/**
 * Multi-head attention split by heads: this shard's heads of the query, key and value projections
 * (their kernels [features, heads, size] split on the heads), the layer's own masked softmax over
 * them, and its heads' part of the output projection (kernel [heads, size, features]): a partial sum.
 */
export function headsPartial(
  node: LayerNode,
  layer: tfl.layers.Layer,
  weights: Array<{ name: string; variable: tf.Variable }>,
  params: ShardedParams,
): { run: (inputs: tf.Tensor[], context: PassContext) => tf.Tensor; indices: number[] } {
  const mha = layer as unknown as AttentionLayer;
  const indices: number[] = [];
  const part = (projection: string, what: 'kernel' | 'bias', axis: number): tf.Variable | null => {
    const w = weights.find((x) => x.name.endsWith(`/${projection}/${what}`));
    if (!w) return null;
    const k = params.slice(w.variable, w.name, axis);
    indices.push(k);
    return params.variable(k);
  };
  const project = (projection: string, equation: string) => {
    const kernel = part(projection, 'kernel', 1)!;
    const bias = part(projection, 'bias', 0);
    const addBias = projection === 'key' ? addWithoutBiasGradient : tf.add;
    return (x: tf.Tensor) => (bias ? addBias(einsumMatMul(equation, x, kernel), bias) : einsumMatMul(equation, x, kernel));
  };
  const query = project('query', mha.queryDense.equation);
  const key = project('key', mha.keyDense.equation);
  const value = project('value', mha.valueDense.equation);
  const output = part('attention_output', 'kernel', 0)!;
  const causal = attentionIsCausal(node, layer);
  const run = (inputs: tf.Tensor[], context: PassContext) => {
    if (context.training && mha.dropout > 0) {
      throw new Error(`Layer "${node.id}" has attention dropout ${mha.dropout}, which a tensor-parallel stage does not draw on split heads; set its dropout to 0 or keep it replicated (weight "B").`);
    }
    const [q, v, k] = inputs;
    const mask = mha.computeAttentionMask(q, v, undefined, causal);
    const [attended] = mha.computeAttention(query(q), key(k ?? v), value(v), mask ?? undefined, false);
    return einsumMatMul(mha.outputDense.equation, attended, output);
  };
  return { run, indices };
}
