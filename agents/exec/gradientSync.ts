import type * as tf from '@tensorflow/tfjs-core';
import { z } from 'zod';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { GRADIENT_BUCKET_BYTES } from '../../engine/plan/runtimeConstants.js';
import { allReduce, type CollectiveTuning } from '../comm/collectives.js';
import type { ProcessGroup } from '../comm/processGroup.js';
import { clipScale } from './clipping.js';
import { CommClock } from './commClock.js';
import type { BucketLayout, DataParallelUpdate } from './dataParallelUpdate.js';
import { bucketOfParameter, planBuckets } from './gradientBuckets.js';
import type { OptimizerMemo, OptimizerState } from './optimizer.js';
import { ReplicatedUpdate } from './replicatedUpdate.js';
import { ShardedUpdate } from './shardedUpdate.js';

export interface GradientClipping {
  /** plan.gradientClipNorm: the bound on the global L2 norm of one step's gradients. */
  norm: number;
  /** Every rank of the job (all stages, replicas and shards): the norm is over the whole model. */
  group: ProcessGroup;
  /**
   * countsTowardNorm[i]: whether this rank counts parameter i, so that each gradient element is
   * counted once across the job — false for a tensor-replicated parameter on all shards but one.
   * Absent: every parameter counts.
   */
  countsTowardNorm?: readonly boolean[];
}

export interface GradientSyncOptions {
  /** The stage's data-parallel group (same stage, same tensor shard), in the same order on every member. */
  group: ProcessGroup;
  /** The stage's parameters in parameter order; gradReady's index refers to this list. */
  params: tf.Variable[];
  /** plan.zero: 0 replicated, 1 sharded optimizer state, 2 also sharded gradients. */
  zero: number;
  optimizer: OptimizerConfig;
  /** Bytes per gradient bucket (default GRADIENT_BUCKET_BYTES, what the cost model prices); 0: the whole stage in one bucket. */
  bucketBytes?: number;
  clip?: GradientClipping;
  /** Prefix of the collectives' tags, unique to this instance on its group (default `grads`). */
  tagPrefix?: string;
  tuning?: CollectiveTuning;
}

export interface SyncTimings {
  /** Time finish() waited for communication: what the backward pass did not hide, plus the norm and the parameter all-gather. */
  allReduceMs: number;
  /** Wall time with any of this step's collectives in flight, hidden or not. */
  commMs: number;
}

const SettingsSchema = z.object({
  zero: z
    .number()
    .int()
    .min(0, 'ZeRO stage must be 0, 1 or 2')
    .max(2, 'ZeRO stage 3 (sharded parameters) is not implemented by GradientSync; use stage 0, 1 or 2'),
  bucketBytes: z.number().int().min(0, 'bucketBytes must be 0 (one bucket) or more'),
  clipNorm: z.number().positive('gradientClipNorm must be positive').optional(),
  tagPrefix: z.string().min(1),
});

/**
 * Data-parallel gradient synchronisation and the optimizer step of one stage, with ZeRO stages 0–2,
 * gradient buckets that overlap the backward pass, and global-norm clipping.
 *
 * Per step: the executor hands over each parameter's final gradient with gradReady() as soon as it has
 * it; a bucket's collective starts the moment its last parameter arrives, without waiting, so it
 * travels while earlier layers still compute. finish() then waits for the buckets, clips, and has the
 * update strategy (ZeRO 0: ReplicatedUpdate; ZeRO 1/2: ShardedUpdate) bring the stage's variables to
 * the same updated values on every member.
 */
export class GradientSync {
  private readonly layout: BucketLayout;
  private readonly update: DataParallelUpdate;
  private readonly tagPrefix: string;
  private readonly clip: GradientClipping | null;
  private readonly ready: boolean[];
  private readonly missing: number[];
  /** Each started bucket's summed gradients, as far as this member holds them. */
  private readonly inFlight: Array<Promise<Float32Array> | null>;
  /** Updates so far: numbers the collectives' tags, the same on every member. */
  private updates = 0;
  /** The training step being synchronised, when the caller said (beginStep): it names the tags. */
  private step: number | null = null;

  constructor(options: GradientSyncOptions) {
    const parsed = SettingsSchema.safeParse({
      zero: options.zero,
      bucketBytes: options.bucketBytes ?? GRADIENT_BUCKET_BYTES,
      clipNorm: options.clip?.norm,
      tagPrefix: options.tagPrefix ?? 'grads',
    });
    if (!parsed.success) throw new Error(`GradientSync for ${options.group.name}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}.`);
    const { zero, bucketBytes, tagPrefix } = parsed.data;
    const counts = options.clip?.countsTowardNorm;
    if (counts && counts.length !== options.params.length) {
      throw new Error(`GradientSync for ${options.group.name}: countsTowardNorm has ${counts.length} flags for ${options.params.length} parameters.`);
    }
    const sizes = options.params.map((p) => p.size);
    const buckets = planBuckets(sizes, bucketBytes);
    this.layout = { group: options.group, params: options.params, sizes, buckets, bucketOf: bucketOfParameter(buckets, sizes.length), tuning: options.tuning ?? {}, clock: new CommClock() };
    this.update = zero === 0 ? new ReplicatedUpdate(this.layout, options.optimizer) : new ShardedUpdate(this.layout, options.optimizer, zero as 1 | 2, tagPrefix);
    this.tagPrefix = tagPrefix;
    this.clip = options.clip ?? null;
    this.ready = sizes.map(() => false);
    this.missing = buckets.map((b) => b.end - b.first);
    this.inFlight = buckets.map(() => null);
  }

  /**
   * Name this update's collectives after the training step, so a timeout says "s17/grads/b2"
   * (stuck at step 17) rather than an update count that restarts when a run resumes.
   */
  beginStep(step: number): void {
    this.step = step;
  }

  private stepLabel(): string {
    return this.step === null ? `u${this.updates}` : `s${this.step}`;
  }

  /**
   * Parameter `index`'s gradient for this step is final (accumulated over every micro-batch): copy it
   * into its bucket, dispose it, and start the bucket's collective if it was the last one missing.
   */
  gradReady(index: number, grad: tf.Tensor): void {
    const { sizes, params, buckets, bucketOf } = this.layout;
    if (!Number.isInteger(index) || index < 0 || index >= sizes.length) {
      throw new Error(`GradientSync.gradReady: parameter index ${index} is out of range; the stage has ${sizes.length} parameters.`);
    }
    if (this.ready[index]) {
      throw new Error(`GradientSync.gradReady: parameter ${index} got a second gradient in one step; pass each parameter's gradient once, after accumulating every micro-batch.`);
    }
    if (grad.size !== sizes[index]) {
      throw new Error(`GradientSync.gradReady: the gradient of parameter ${index} has ${grad.size} values but the parameter has ${sizes[index]} (shape [${params[index].shape.join(', ')}]).`);
    }
    const k = bucketOf[index];
    const bucket = buckets[k];
    this.update.bucketBuffer(k).set(grad.dataSync() as Float32Array, bucket.offsets[index - bucket.first]);
    grad.dispose();
    this.ready[index] = true;
    if (--this.missing[k] === 0) this.start(k);
  }

  private start(k: number): void {
    const reduced = this.update.reduce(k, `${this.stepLabel()}/${this.tagPrefix}/b${k}`);
    // finish() awaits it; until then a failure must not surface as an unhandled rejection (which ends Node).
    reduced.catch(() => {});
    this.inFlight[k] = reduced;
  }

  /**
   * Wait for the buckets, clip and update the parameters in place. Every member of the group calls it
   * once per step, after gradReady for every parameter; with clipping, every rank of the job does, as
   * the norm is summed over all of them.
   */
  async finish(step: number, lrScale = 1): Promise<SyncTimings> {
    const absent = this.ready.flatMap((r, i) => (r ? [] : [i]));
    if (absent.length > 0) {
      throw new Error(`GradientSync.finish (step ${step}): parameters ${absent.join(', ')} of ${this.layout.sizes.length} got no gradient; the executor must call gradReady(index, grad) for every parameter before finish.`);
    }
    let allReduceMs = 0;
    const waited = async <T>(p: Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await p;
      } finally {
        allReduceMs += performance.now() - t0;
      }
    };
    const reduced = await waited(Promise.all(this.inFlight as Array<Promise<Float32Array>>));
    const scale = this.clip ? clipScale(Math.sqrt(await waited(this.globalSumOfSquares(reduced, this.clip))), this.clip.norm) : 1;
    const label = this.stepLabel();
    await this.update.update(reduced, scale, lrScale, (k) => `${label}/${this.tagPrefix}/p${k}`, waited);
    this.ready.fill(false);
    this.layout.buckets.forEach((b, k) => (this.missing[k] = b.end - b.first));
    this.inFlight.fill(null);
    this.updates += 1;
    return { allReduceMs, commMs: this.layout.clock.take() };
  }

  /** Σ g² over the whole job, each element counted once (the update strategy knows who counts what). */
  private async globalSumOfSquares(reduced: Float32Array[], clip: GradientClipping): Promise<number> {
    const sum = Float32Array.of(this.update.localSumOfSquares(reduced, (i) => clip.countsTowardNorm?.[i] ?? true));
    // Its own prefix: every rank of the job takes part, whatever stage (and tag prefix) it serves.
    await this.layout.clock.track(() => allReduce(clip.group, sum, `${this.stepLabel()}/clipnorm`));
    return sum[0];
  }

  /** The optimizer state without any collective (ZeRO 0 only: the replicated optimizer's whole state). */
  exportLocalState(): OptimizerState {
    return this.update.exportLocalState();
  }

  /** This member's optimizer state as tensor references (nothing copied), to undo one update. */
  memo(): OptimizerMemo {
    return this.update.memo();
  }

  rewind(memo: OptimizerMemo): void {
    this.update.rewind(memo);
  }

  /**
   * The optimizer state in the replicated layout (per parameter, full shapes), as checkpoints store it
   * whatever the ZeRO stage. Under ZeRO 1/2 a collective: every member of the group must call it.
   */
  gatherState(): Promise<OptimizerState> {
    return this.update.gatherState();
  }

  /** Restore a state in the replicated layout (from gatherState or a ZeRO-0 checkpoint); each member takes its chunks. */
  importState(state: OptimizerState): void {
    this.update.importState(state);
  }

  dispose(): void {
    this.update.dispose();
  }
}
