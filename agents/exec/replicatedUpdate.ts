import * as tf from '@tensorflow/tfjs-core';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { allReduce, SMALL_ALL_REDUCE_BYTES } from '../comm/collectives.js';
import { ringArray } from '../comm/pipelinedRing.js';
import { scaleGradients, sumOfSquares } from './clipping.js';
import { placeOf, type BucketLayout, type DataParallelUpdate } from './dataParallelUpdate.js';
import { createOptimizer, type Optimizer, type OptimizerMemo, type OptimizerState } from './optimizer.js';

/**
 * ZeRO 0: every bucket is all-reduced and every member runs the whole optimizer on the summed
 * gradients, so each holds the full optimizer state. Buckets are kept from step to step.
 */
export class ReplicatedUpdate implements DataParallelUpdate {
  private readonly optimizer: Optimizer;
  private readonly buffers: Array<Float32Array | null>;

  constructor(
    private readonly layout: BucketLayout,
    config: OptimizerConfig,
  ) {
    this.optimizer = createOptimizer(config);
    this.buffers = layout.buckets.map(() => null);
  }

  /** Buckets that go round the ring are reduced in place (ringArray); small ones are exchanged whole. */
  bucketBuffer(k: number): Float32Array {
    const { group, tuning, buckets } = this.layout;
    const length = buckets[k].length;
    const ring = group.size > 1 && length * 4 > (tuning.smallBytes ?? SMALL_ALL_REDUCE_BYTES);
    return (this.buffers[k] ??= ring ? ringArray(length, group.size) : new Float32Array(length));
  }

  reduce(k: number, tag: string): Promise<Float32Array> {
    const { group, tuning, clock } = this.layout;
    const buffer = this.buffers[k]!;
    return clock.track(() => allReduce(group, buffer, tag, tuning)).then(() => buffer);
  }

  /** Every replica holds the same sums, so replica 0 alone counts them: in parameter order whatever the buckets, so the bucket size cannot change the norm's rounding. */
  localSumOfSquares(reduced: Float32Array[], counts: (param: number) => boolean): number {
    if (this.layout.group.index !== 0) return 0;
    let local = 0;
    this.layout.sizes.forEach((n, i) => {
      const { k, at } = placeOf(this.layout, i);
      if (counts(i)) local += sumOfSquares(reduced[k], at, at + n);
    });
    return local;
  }

  async update(reduced: Float32Array[], scale: number, lrScale: number): Promise<void> {
    const { params, sizes } = this.layout;
    const grads = params.map((p, i) => {
      const { k, at } = placeOf(this.layout, i);
      return tf.tensor(reduced[k].slice(at, at + sizes[i]), p.shape, 'float32');
    });
    this.optimizer.apply(params, scaleGradients(grads, scale), lrScale);
  }

  exportLocalState(): OptimizerState {
    return this.optimizer.exportState();
  }

  async gatherState(): Promise<OptimizerState> {
    return this.optimizer.exportState();
  }

  importState(state: OptimizerState): void {
    this.optimizer.importState(state, this.layout.params);
  }

  memo(): OptimizerMemo {
    return this.optimizer.memo();
  }

  rewind(memo: OptimizerMemo): void {
    this.optimizer.rewind(memo);
  }

  dispose(): void {
    this.optimizer.dispose();
  }
}
