/**
 * How a parameter's gradient is summed across a stage's devices:
 * - sharded: each tensor-parallel shard holds its own slice; sum over the data-parallel group only;
 * - replicated: every shard computed the same gradient redundantly; data-parallel group only;
 * - batchSplit: the layer ran on a slice of the batch on each shard, so shards hold partial sums that
 *   are added over the tensor-parallel group as well.
 */
export type GradientSum = 'sharded' | 'replicated' | 'batchSplit';

/** A parameter as one shard holds it: its slice (when split) and how its gradient is summed. */
export interface ShardedParamSpec {
  /** The weight's manifest name (`<layer>/kernel`). */
  name: string;
  shape: number[];
  /** Initial values where the executor makes them (empty where the layer's own variable holds them). */
  init: Float32Array;
  sum: GradientSum;
  /** Present when this shard holds a slice: the whole tensor's shape and which slice. */
  split?: { axis: number; parts: number; index: number; fullShape: number[] };
}

/** Slice `index` of `parts` equal slices of a row-major tensor along `axis`. */
export function sliceAxis(values: Float32Array, shape: number[], axis: number, parts: number, index: number): Float32Array {
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const width = shape[axis] / parts;
  const out = new Float32Array(outer * width * inner);
  for (let o = 0; o < outer; o++) {
    const from = (o * shape[axis] + index * width) * inner;
    out.set(values.subarray(from, from + width * inner), o * width * inner);
  }
  return out;
}

/** Inverse of sliceAxis: write slice `index` into the whole tensor `into`. */
export function placeSlice(into: Float32Array, slice: Float32Array, shape: number[], axis: number, parts: number, index: number): void {
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const width = shape[axis] / parts;
  for (let o = 0; o < outer; o++) {
    into.set(slice.subarray(o * width * inner, (o + 1) * width * inner), (o * shape[axis] + index * width) * inner);
  }
}
