import * as tf from '@tensorflow/tfjs-core';
import { z } from 'zod';
import type { OptimizerConfig } from '../../engine/plan/plan.js';
import { allGather, allReduce, reduceScatter, SMALL_ALL_REDUCE_BYTES, type CollectiveTuning } from '../comm/collectives.js';
import { ringArray } from '../comm/pipelinedRing.js';
import type { ProcessGroup } from '../comm/processGroup.js';
import { clipScale, scaleGradients, sumOfSquares } from './clipping.js';
import { CommClock } from './commClock.js';
import { GRADIENT_BUCKET_BYTES } from '../../engine/plan/runtimeConstants.js';
import { bucketOfParameter, overlaps, planBuckets, type Bucket } from './gradientBuckets.js';
import { createOptimizer, type Optimizer, type OptimizerMemo, type OptimizerState } from './optimizer.js';
import { ShardedOptimizer } from './zeroOptimizer.js';

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
  /** Bytes per gradient bucket (default 4 MiB); 0: the whole stage in one bucket. */
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
 * travels while earlier layers still compute. finish() then waits for the buckets, clips, updates and
 * (ZeRO 1/2) all-gathers the updated parameters into the stage's variables, identical on every member.
 *
 * ZeRO 0 all-reduces every bucket and runs the replicated optimizer. ZeRO 1 and 2 reduce-scatter
 * instead — a member updates only its chunk, so the other chunks' sums would be wasted, and
 * reduce-scatter plus the parameter all-gather moves exactly the bytes of one all-reduce (what the
 * cost model prices). They differ in what they keep: ZeRO 1 keeps each bucket's full gradient buffer
 * from step to step (reused for the all-gather), ZeRO 2 keeps only the own chunk once a bucket is
 * reduced and allocates full buffers just while they are in use.
 */
export class GradientSync {
  private readonly group: ProcessGroup;
  private readonly params: tf.Variable[];
  private readonly zero: number;
  private readonly tagPrefix: string;
  private readonly tuning: CollectiveTuning;
  private readonly clip: GradientClipping | null;
  private readonly buckets: Bucket[];
  private readonly bucketOf: number[];
  private readonly sizes: number[];
  private readonly replicated: Optimizer | null;
  private readonly sharded: ShardedOptimizer | null;
  /** Each bucket's flat gradients (ZeRO 2: only between its first gradient and its reduce-scatter). */
  private readonly buffers: Array<Float32Array | null>;
  private readonly ready: boolean[];
  private readonly missing: number[];
  /** Each started bucket's summed gradients: the whole bucket (ZeRO 0) or the own chunk (ZeRO 1/2). */
  private readonly inFlight: Array<Promise<Float32Array> | null>;
  private readonly clock = new CommClock();
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
    this.group = options.group;
    this.params = options.params;
    this.zero = zero;
    this.tagPrefix = tagPrefix;
    this.tuning = options.tuning ?? {};
    this.clip = options.clip ?? null;
    this.sizes = options.params.map((p) => p.size);
    this.buckets = planBuckets(this.sizes, bucketBytes);
    this.bucketOf = bucketOfParameter(this.buckets, this.sizes.length);
    this.replicated = zero === 0 ? createOptimizer(options.optimizer) : null;
    this.sharded = zero === 0 ? null : new ShardedOptimizer(options.optimizer, this.group, this.buckets, this.params, `${tagPrefix}/opt`);
    this.buffers = this.buckets.map(() => null);
    this.ready = this.sizes.map(() => false);
    this.missing = this.buckets.map((b) => b.end - b.first);
    this.inFlight = this.buckets.map(() => null);
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
    if (!Number.isInteger(index) || index < 0 || index >= this.sizes.length) {
      throw new Error(`GradientSync.gradReady: parameter index ${index} is out of range; the stage has ${this.sizes.length} parameters.`);
    }
    if (this.ready[index]) {
      throw new Error(`GradientSync.gradReady: parameter ${index} got a second gradient in one step; pass each parameter's gradient once, after accumulating every micro-batch.`);
    }
    if (grad.size !== this.sizes[index]) {
      throw new Error(`GradientSync.gradReady: the gradient of parameter ${index} has ${grad.size} values but the parameter has ${this.sizes[index]} (shape [${this.params[index].shape.join(', ')}]).`);
    }
    const k = this.bucketOf[index];
    const bucket = this.buckets[k];
    const buffer = (this.buffers[k] ??= this.newBucketBuffer(bucket.length));
    buffer.set(grad.dataSync() as Float32Array, bucket.offsets[index - bucket.first]);
    grad.dispose();
    this.ready[index] = true;
    if (--this.missing[k] === 0) this.start(k, buffer);
  }

  /**
   * A bucket kept from step to step that goes round the ring is reduced in place (ringArray). ZeRO 2
   * lets its buckets go after each step, and small ones are exchanged whole: plain arrays for those.
   */
  private newBucketBuffer(length: number): Float32Array {
    const ring = this.group.size > 1 && this.zero !== 2 && (this.zero === 1 || length * 4 > (this.tuning.smallBytes ?? SMALL_ALL_REDUCE_BYTES));
    return ring ? ringArray(length, this.group.size) : new Float32Array(length);
  }

  private start(k: number, buffer: Float32Array): void {
    const tag = `${this.stepLabel()}/${this.tagPrefix}/b${k}`;
    const reduced =
      this.zero === 0
        ? this.clock.track(() => allReduce(this.group, buffer, tag, this.tuning)).then(() => buffer)
        : this.clock.track(() => reduceScatter(this.group, buffer, tag, this.tuning)).then((chunk) => this.keep(k, chunk));
    // finish() awaits it; until then a failure must not surface as an unhandled rejection (which ends Node).
    reduced.catch(() => {});
    this.inFlight[k] = reduced;
  }

  /** ZeRO 2 keeps only the own chunk of a reduced bucket; ZeRO 1 keeps the buffer for the next step. */
  private keep(k: number, chunk: Float32Array): Float32Array {
    if (this.zero !== 2) return chunk;
    this.buffers[k] = null;
    return chunk.slice();
  }

  /**
   * Wait for the buckets, clip, update the parameters in place and (ZeRO 1/2) all-gather them. Every
   * member of the group calls it once per step, after gradReady for every parameter; with clipping,
   * every rank of the job does, as the norm is summed over all of them.
   */
  async finish(step: number, lrScale = 1): Promise<SyncTimings> {
    const absent = this.ready.flatMap((r, i) => (r ? [] : [i]));
    if (absent.length > 0) {
      throw new Error(`GradientSync.finish (step ${step}): parameters ${absent.join(', ')} of ${this.sizes.length} got no gradient; the executor must call gradReady(index, grad) for every parameter before finish.`);
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
    if (this.replicated) {
      const grads = this.params.map((p, i) => {
        const bucket = this.buckets[this.bucketOf[i]];
        const at = bucket.offsets[i - bucket.first];
        return tf.tensor(reduced[this.bucketOf[i]].slice(at, at + this.sizes[i]), p.shape, 'float32');
      });
      this.replicated.apply(this.params, scaleGradients(grads, scale), lrScale);
    } else {
      const grads = reduced.map((chunk) => tf.tensor1d(chunk.slice(), 'float32'));
      const gathered = this.buckets.map((b, k) => (this.zero === 1 ? this.buffers[k]! : new Float32Array(b.length)));
      this.sharded!.apply(scaleGradients(grads, scale), gathered, lrScale);
      await waited(Promise.all(gathered.map((flat, k) => this.clock.track(() => allGather(this.group, flat, `${this.stepLabel()}/${this.tagPrefix}/p${k}`, this.tuning)))));
      this.assignParams(gathered);
    }
    this.ready.fill(false);
    this.buckets.forEach((b, k) => (this.missing[k] = b.end - b.first));
    this.inFlight.fill(null);
    this.updates += 1;
    return { allReduceMs, commMs: this.clock.take() };
  }

  private assignParams(gathered: Float32Array[]): void {
    tf.tidy(() =>
      this.params.forEach((p, i) => {
        const bucket = this.buckets[this.bucketOf[i]];
        const at = bucket.offsets[i - bucket.first];
        p.assign(tf.tensor(gathered[this.bucketOf[i]].slice(at, at + this.sizes[i]), p.shape, 'float32'));
      }),
    );
  }

  /**
   * Σ g² over the whole job, each element counted once: under ZeRO 0 every replica holds the same
   * summed gradients, so replica 0 alone counts them; under ZeRO 1/2 each replica counts its chunks.
   */
  private async globalSumOfSquares(reduced: Float32Array[], clip: GradientClipping): Promise<number> {
    const counts = (i: number) => clip.countsTowardNorm?.[i] ?? true;
    let local = 0;
    if (this.sharded) {
      this.buckets.forEach((bucket, k) => {
        const [from, to] = this.sharded!.chunkOf(k);
        for (const o of overlaps(bucket, this.sizes, from, to)) {
          if (counts(o.param)) local += sumOfSquares(reduced[k], o.at, o.at + o.stop - o.start);
        }
      });
    } else if (this.group.index === 0) {
      // In parameter order whatever the buckets, so the bucket size cannot change the norm's rounding.
      this.sizes.forEach((n, i) => {
        const bucket = this.buckets[this.bucketOf[i]];
        const at = bucket.offsets[i - bucket.first];
        if (counts(i)) local += sumOfSquares(reduced[this.bucketOf[i]], at, at + n);
      });
    }
    const sum = Float32Array.of(local);
    // Its own prefix: every rank of the job takes part, whatever stage (and tag prefix) it serves.
    await this.clock.track(() => allReduce(clip.group, sum, `${this.stepLabel()}/clipnorm`));
    return sum[0];
  }

  /** The optimizer state without any collective (ZeRO 0 only: the replicated optimizer's whole state). */
  exportLocalState(): OptimizerState {
    if (!this.replicated) throw new Error(`Under ZeRO ${this.zero} the optimizer state is sharded over ${this.group.name}; gather it with gatherState().`);
    return this.replicated.exportState();
  }

  /** This member's optimizer state as tensor references (nothing copied), to undo one update. */
  memo(): OptimizerMemo {
    return this.replicated ? this.replicated.memo() : this.sharded!.memo();
  }

  rewind(memo: OptimizerMemo): void {
    if (this.replicated) this.replicated.rewind(memo);
    else this.sharded!.rewind(memo);
  }

  /**
   * The optimizer state in the replicated layout (per parameter, full shapes), as checkpoints store it
   * whatever the ZeRO stage. Under ZeRO 1/2 a collective: every member of the group must call it.
   */
  async gatherState(): Promise<OptimizerState> {
    return this.sharded ? this.sharded.gatherState() : this.replicated!.exportState();
  }

  /** Restore a state in the replicated layout (from gatherState or a ZeRO-0 checkpoint); each member takes its chunks. */
  importState(state: OptimizerState): void {
    if (this.sharded) this.sharded.importState(state);
    else this.replicated!.importState(state, this.params);
  }

  dispose(): void {
    this.replicated?.dispose();
    this.sharded?.dispose();
  }
}
