import type { LayerNode, ModelGraph } from '../model/graph.js';
import { splitAxis, type WeightSbp } from './sbp.js';

/**
 * Which layers a tensor-parallel stage can split, and how (Megatron's layout):
 * - column: a Dense kernel split over its units (S(1)); its activation runs on each shard's slice, so
 *   it must be elementwise; a model output kept split this way is Whale's class-sharded classifier;
 * - row: a Dense kernel split over its input features (S(0)), completed by one all-reduce;
 * - heads: a MultiHeadAttention split by heads (S(1) of the query/key/value kernels [features, heads,
 *   size]), the output projection row-parallel;
 * - vocabulary: an Embedding split over its rows (S(0)): each shard looks up the ids it owns.
 */
export type ShardRole = 'column' | 'row' | 'heads' | 'vocabulary';

/** Keras activations that act on each value alone (so on any slice of the units). */
const ELEMENTWISE = new Set(['linear', 'relu', 'relu6', 'elu', 'selu', 'sigmoid', 'hardsigmoid', 'tanh', 'softplus', 'softsign', 'swish', 'silu', 'mish', 'gelu', 'gelunew', 'exponential']);

export function isElementwise(activation: string): boolean {
  return ELEMENTWISE.has(activation.toLowerCase().replace(/_/g, ''));
}

export function shardRole(layer: LayerNode, weight: WeightSbp): ShardRole | null {
  const axis = splitAxis(weight);
  const kind = layer.spec.kind;
  if ((kind === 'dense' || kind === 'denseNd') && (axis === 0 || axis === 1)) return axis === 1 ? 'column' : 'row';
  if (kind === 'multiHeadAttention' && axis === 1) return 'heads';
  if (kind === 'embedding' && axis === 0) return 'vocabulary';
  return null;
}

const SHARDABLE = 'tensor-parallel stages split Dense layers (S(1) column-, S(0) row-parallel), MultiHeadAttention by heads (S(1)) and Embedding by vocabulary (S(0))';

/**
 * Why the layer cannot have its weight split `weight` over `degree` shards, or null when it can.
 * `inputShape` is the shape (without the batch) of the layer's first input.
 */
export function shardingProblem(layer: LayerNode, weight: WeightSbp, degree: number, inputShape: number[]): string | null {
  if (splitAxis(weight) === undefined) return null;
  const role = shardRole(layer, weight);
  const spec = layer.spec;
  const name = `Layer "${layer.id}" (${spec.kind === 'opaque' ? spec.className : spec.kind})`;
  if (role === null) return `${name} cannot have its weight split ${weight}: ${SHARDABLE}.`;
  const divides = (what: string, n: number) => (n % degree === 0 ? null : `${name} is split ${degree} ways by ${what}, but it has ${n}.`);
  if (spec.kind === 'dense' || spec.kind === 'denseNd') {
    if (spec.kind === 'denseNd' && spec.tiedTo) return `${name} shares its kernel with "${spec.tiedTo}", so it cannot be split on its own.`;
    if (role === 'row') return divides('input features', inputShape[inputShape.length - 1]);
    if (!isElementwise(spec.activation)) return `${name} is column-parallel (S(1)), but its activation ${spec.activation} is not elementwise: each shard holds only a slice of its units.`;
    return divides('units', spec.units);
  }
  if (spec.kind === 'multiHeadAttention') return divides('heads', spec.numHeads);
  if (spec.kind === 'embedding') return divides('vocabulary rows', spec.inputDim);
  return null;
}

/** The layer kinds a tensor-parallel stage cannot run at all, with the reason. */
export function unshardableLayer(layer: LayerNode): string | null {
  if (layer.spec.kind === 'batchNorm') {
    return `Layer "${layer.id}" (batchNorm) normalises by statistics of the whole batch, but a tensor-parallel stage runs its unsplit layers on each shard's rows of the batch.`;
  }
  return null;
}

/** The first input's shape of a layer (without the batch), as the graph records it. */
export function inputShapeOf(model: ModelGraph, layer: LayerNode): number[] {
  return model.layers.find((l) => l.id === layer.inputs[0])?.outputShape ?? [];
}
