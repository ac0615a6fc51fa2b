import type * as tf from '@tensorflow/tfjs-core';
import type { CollectiveTuning } from '../comm/collectives.js';
import type { ProcessGroup } from '../comm/processGroup.js';
import type { CommClock } from './commClock.js';
import type { Bucket } from './gradientBuckets.js';
import type { OptimizerMemo, OptimizerState } from './optimizer.js';

/** The stage's parameters cut into buckets, as GradientSync and its update strategy both see them. */
export interface BucketLayout {
  group: ProcessGroup;
  params: tf.Variable[];
  sizes: number[];
  buckets: Bucket[];
  /** bucketOf[i]: the bucket holding parameter i. */
  bucketOf: number[];
  tuning: CollectiveTuning;
  /** Times every collective of the step, hidden or not. */
  clock: CommClock;
}

/** Waits for communication that the step could not hide, adding the wait to the step's all-reduce time. */
export type Waited = <T>(pending: Promise<T>) => Promise<T>;

/**
 * How a data-parallel group turns the gradient buckets its members fill into the same updated
 * parameters on every member: a replicated optimizer (ZeRO 0, replicatedUpdate.ts) or one sharded
 * over the group (ZeRO 1/2, shardedUpdate.ts). GradientSync keeps the bookkeeping both share — which
 * gradients arrived, when a bucket may start, clipping and timings — and asks this for the rest.
 */
export interface DataParallelUpdate {
  /** Bucket k's flat gradient buffer for this step, made on first use. */
  bucketBuffer(k: number): Float32Array;
  /** Start bucket k's collective: resolves to what this member then holds of the summed bucket. */
  reduce(k: number, tag: string): Promise<Float32Array>;
  /**
   * This member's share of Σg² of the summed gradients (`reduced`, one entry per bucket), counting
   * each element once over the group and only parameters `counts` accepts.
   */
  localSumOfSquares(reduced: Float32Array[], counts: (param: number) => boolean): number;
  /** Update the stage's variables from the summed gradients times `scale`; `tag(k)` names bucket k's collectives. */
  update(reduced: Float32Array[], scale: number, lrScale: number, tag: (k: number) => string, waited: Waited): Promise<void>;
  /** The whole optimizer state without any collective (only where one member holds it all). */
  exportLocalState(): OptimizerState;
  /** The optimizer state in the replicated layout (per parameter, full shapes): a collective when sharded. */
  gatherState(): Promise<OptimizerState>;
  /** Restore a state in the replicated layout; a sharded member takes its chunks. */
  importState(state: OptimizerState): void;
  /** This member's optimizer state as tensor references (nothing copied), to undo one update. */
  memo(): OptimizerMemo;
  rewind(memo: OptimizerMemo): void;
  dispose(): void;
}

/** Where parameter i starts in its bucket's flat array, and that array's index. */
export function placeOf(layout: BucketLayout, i: number): { k: number; at: number } {
  const k = layout.bucketOf[i];
  const bucket = layout.buckets[k];
  return { k, at: bucket.offsets[i - bucket.first] };
}
