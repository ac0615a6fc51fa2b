import * as tf from '@tensorflow/tfjs-core';
import { chunkBounds } from '../comm/chunking.js';
import { allGather } from '../comm/collectives.js';
import type { ProcessGroup } from '../comm/processGroup.js';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { overlaps, type Bucket } from './gradientBuckets.js';
import { createOptimizer, type Optimizer, type OptimizerMemo, type OptimizerState } from './optimizer.js';

/**
 * ZeRO's sharded optimizer (stages 1 and 2): each member of a data-parallel group keeps optimizer
 * state for, and updates, only its chunk of every gradient bucket — chunk i of a bucket's flat array
 * for member i, cut by `chunkBounds` exactly as reduce-scatter leaves the summed gradients and as
 * all-gather expects the updated parameters. The update is the ordinary Optimizer run on one flat 1-D
 * variable per bucket chunk: its formulas are elementwise, so each element sees the very arithmetic
 * the replicated optimizer would apply to it.
 */
export class ShardedOptimizer {
  private readonly inner: Optimizer;
  /** The own chunk of each bucket's parameters, as the variables the inner optimizer updates. */
  private readonly chunks: tf.Variable[];
  private readonly bounds: Array<[number, number]>;
  private readonly sizes: number[];
  private stateGathers = 0;

  constructor(
    config: OptimizerConfig,
    private readonly group: ProcessGroup,
    private readonly buckets: readonly Bucket[],
    private readonly params: readonly tf.Variable[],
    private readonly tagPrefix: string,
  ) {
    this.inner = createOptimizer(config);
    this.bounds = buckets.map((b) => chunkBounds(b.length, group.size, group.index));
    this.sizes = params.map((p) => p.size);
    this.chunks = this.bounds.map(([a, b]) => tf.tidy(() => tf.variable(tf.zeros([b - a]), false)));
  }

  /** This member's optimizer state (its chunks' slots), for undoing one update. */
  memo(): OptimizerMemo {
    return this.inner.memo();
  }

  rewind(memo: OptimizerMemo): void {
    this.inner.rewind(memo);
  }

  /** [from, to) of bucket `k`'s flat array that this member owns. */
  chunkOf(k: number): [number, number] {
    return this.bounds[k];
  }

  /**
   * Update the own chunk of every bucket from its summed gradient chunk (taking ownership of `grads`,
   * one per bucket), and write the updated values into `into[k]` at the chunk's place. The parameter
   * values are read from the stage's variables every step, so anything that assigns them (a restored
   * checkpoint) is respected.
   */
  apply(grads: tf.Tensor[], into: Float32Array[], lrScale: number): void {
    tf.tidy(() => this.chunks.forEach((chunk, k) => chunk.assign(tf.tensor1d(this.readParams(k), 'float32'))));
    this.inner.apply(this.chunks, grads, lrScale);
    this.chunks.forEach((chunk, k) => into[k].set(chunk.dataSync() as Float32Array, this.bounds[k][0]));
  }

  private readParams(k: number): Float32Array {
    const [from, to] = this.bounds[k];
    const out = new Float32Array(to - from);
    for (const o of overlaps(this.buckets[k], this.sizes, from, to)) {
      out.set((this.params[o.param].dataSync() as Float32Array).subarray(o.start, o.stop), o.at);
    }
    return out;
  }

  /**
   * The full state, per parameter as the replicated optimizer keeps it: every slot's chunks all-gathered
   * over the group. A collective: every member must call it, at the same point of training.
   */
  async gatherState(): Promise<OptimizerState> {
    const own = this.inner.exportState();
    const tag = `${this.tagPrefix}/state${this.stateGathers++}`;
    const sizes = this.sizes;
    const slots: Record<string, Float32Array[]> = {};
    for (const [name, chunkArrays] of Object.entries(own.slots)) {
      const perParam = sizes.map((n) => new Float32Array(n));
      await Promise.all(
        this.buckets.map(async (bucket, k) => {
          const flat = new Float32Array(bucket.length);
          flat.set(chunkArrays[k], this.bounds[k][0]);
          await allGather(this.group, flat, `${tag}/${name}/b${k}`);
          for (let i = bucket.first; i < bucket.end; i++) {
            const offset = bucket.offsets[i - bucket.first];
            perParam[i].set(flat.subarray(offset, offset + sizes[i]));
          }
        }),
      );
      slots[name] = perParam;
    }
    return { step: own.step, slots };
  }

  /**
   * Take this member's chunks of a full state (as gatherState or the replicated optimizer exports it).
   * Slots missing or incomplete in `state` start fresh, as they would for the replicated optimizer.
   */
  importState(state: OptimizerState): void {
    const sizes = this.sizes;
    const slots: Record<string, Float32Array[]> = {};
    for (const [name, arrays] of Object.entries(state.slots)) {
      if (arrays.length !== sizes.length) continue;
      arrays.forEach((a, i) => {
        if (a.length !== sizes[i]) {
          throw new Error(`Optimizer slot "${name}" of parameter ${i} has ${a.length} values but the parameter has ${sizes[i]}; the state was saved for another model.`);
        }
      });
      slots[name] = this.buckets.map((bucket, k) => {
        const [from, to] = this.bounds[k];
        const chunk = new Float32Array(to - from);
        for (const o of overlaps(bucket, sizes, from, to)) chunk.set(arrays[o.param].subarray(o.start, o.stop), o.at);
        return chunk;
      });
    }
    this.inner.importState({ step: state.step, slots }, this.chunks);
  }

  dispose(): void {
    this.inner.dispose();
    this.chunks.forEach((c) => c.dispose());
  }
}
