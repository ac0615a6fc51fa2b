import * as tf from '@tensorflow/tfjs-core';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { allGather, reduceScatter } from '../comm/collectives.js';
import { ringArray } from '../comm/pipelinedRing.js';
import { scaleGradients, sumOfSquares } from './clipping.js';
import { placeOf, type BucketLayout, type DataParallelUpdate, type Waited } from './dataParallelUpdate.js';
import { overlaps } from './gradientBuckets.js';
import type { OptimizerMemo, OptimizerState } from './optimizer.js';
import { ShardedOptimizer } from './zeroOptimizer.js';

/**
 * ZeRO 1 and 2: buckets are reduce-scattered — a member updates only its chunk, so the other chunks'
 * sums would be wasted — and the updated parameters all-gathered, which moves exactly the bytes of one
 * all-reduce (what the cost model prices). The stages differ only in how long a bucket's full buffer
 * lives: ZeRO 1 keeps it from step to step (reused for the all-gather); ZeRO 2 keeps only the own
 * chunk once a bucket is reduced and allocates full buffers just while they are in use.
 */
export class ShardedUpdate implements DataParallelUpdate {
  private readonly optimizer: ShardedOptimizer;
  private readonly buffers: Array<Float32Array | null>;

  constructor(
    private readonly layout: BucketLayout,
    config: OptimizerConfig,
    private readonly zero: 1 | 2,
    tagPrefix: string,
  ) {
    this.optimizer = new ShardedOptimizer(config, layout.group, layout.buckets, layout.params, `${tagPrefix}/opt`);
    this.buffers = layout.buckets.map(() => null);
  }

  /** A bucket kept from step to step (ZeRO 1) is reduced in place on the ring; ZeRO 2's are plain arrays it lets go. */
  bucketBuffer(k: number): Float32Array {
    const { group, buckets } = this.layout;
    const length = buckets[k].length;
    const ring = group.size > 1 && this.zero === 1;
    return (this.buffers[k] ??= ring ? ringArray(length, group.size) : new Float32Array(length));
  }

  reduce(k: number, tag: string): Promise<Float32Array> {
    const { group, tuning, clock } = this.layout;
    return clock.track(() => reduceScatter(group, this.buffers[k]!, tag, tuning)).then((chunk) => this.keep(k, chunk));
  }

  /** ZeRO 2 keeps only the own chunk of a reduced bucket; ZeRO 1 keeps the buffer for the next step. */
  private keep(k: number, chunk: Float32Array): Float32Array {
    if (this.zero === 1) return chunk;
    this.buffers[k] = null;
    return chunk.slice();
  }

  /** Each member counts its own chunks. */
  localSumOfSquares(reduced: Float32Array[], counts: (param: number) => boolean): number {
    let local = 0;
    this.layout.buckets.forEach((bucket, k) => {
      const [from, to] = this.optimizer.chunkOf(k);
      for (const o of overlaps(bucket, this.layout.sizes, from, to)) {
        if (counts(o.param)) local += sumOfSquares(reduced[k], o.at, o.at + o.stop - o.start);
      }
    });
    return local;
  }

  async update(reduced: Float32Array[], scale: number, lrScale: number, tag: (k: number) => string, waited: Waited): Promise<void> {
    const { group, tuning, clock, buckets } = this.layout;
    const grads = reduced.map((chunk) => tf.tensor1d(chunk.slice(), 'float32'));
    const gathered = buckets.map((b, k) => (this.zero === 1 ? this.buffers[k]! : new Float32Array(b.length)));
    this.optimizer.apply(scaleGradients(grads, scale), gathered, lrScale);
    await waited(Promise.all(gathered.map((flat, k) => clock.track(() => allGather(group, flat, tag(k), tuning)))));
    this.assignParams(gathered);
  }

  private assignParams(gathered: Float32Array[]): void {
    const { params, sizes } = this.layout;
    tf.tidy(() =>
      params.forEach((p, i) => {
        const { k, at } = placeOf(this.layout, i);
        p.assign(tf.tensor(gathered[k].slice(at, at + sizes[i]), p.shape, 'float32'));
      }),
    );
  }

  exportLocalState(): OptimizerState {
    throw new Error(`Under ZeRO ${this.zero} the optimizer state is sharded over ${this.layout.group.name}; gather it with gatherState().`);
  }

  gatherState(): Promise<OptimizerState> {
    return this.optimizer.gatherState();
  }

  importState(state: OptimizerState): void {
    this.optimizer.importState(state);
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
