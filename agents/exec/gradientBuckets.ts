/**
 * How a stage's gradients are cut into buckets for data-parallel synchronisation. A bucket is a run of
 * consecutive parameters laid out flat, in parameter order, in one Float32Array; its collective starts
 * as soon as the last of its parameters has its gradient. The backward pass produces gradients from
 * the last layer to the first, so buckets are filled from the last parameter backwards: the first
 * bucket to complete holds the model's last parameters and goes on the wire while earlier layers are
 * still computing. The cut depends only on the parameter sizes and the byte budget, so every member of
 * a data-parallel group forms the very same buckets.
 */
import { GRADIENT_BUCKET_BYTES } from '../../engine/plan/runtimeConstants.js';

export interface Bucket {
  /** Parameters [first, end) of the stage, in parameter order. */
  first: number;
  end: number;
  /** offsets[j]: where parameter first + j starts in the bucket's flat array. */
  offsets: number[];
  /** Elements in the bucket. */
  length: number;
}

/**
 * Cut parameters of `sizes` elements into buckets of about `bucketBytes` (0: one bucket), walking from
 * the last parameter to the first and closing a bucket once it reaches the budget. Buckets are
 * returned in the order they complete during the backward pass (the last parameters' bucket first).
 */
export function planBuckets(sizes: readonly number[], bucketBytes = GRADIENT_BUCKET_BYTES): Bucket[] {
  if (!Number.isInteger(bucketBytes) || bucketBytes < 0) {
    throw new Error(`Gradient bucket size must be a whole number of bytes, 0 or more (0: one bucket); got ${bucketBytes}.`);
  }
  const buckets: Bucket[] = [];
  let end = sizes.length;
  let bytes = 0;
  for (let i = sizes.length - 1; i >= 0; i--) {
    bytes += sizes[i] * 4;
    if ((bucketBytes > 0 && bytes >= bucketBytes) || i === 0) {
      buckets.push(bucketOf(sizes, i, end));
      end = i;
      bytes = 0;
    }
  }
  return buckets;
}

function bucketOf(sizes: readonly number[], first: number, end: number): Bucket {
  const offsets: number[] = [];
  let length = 0;
  for (let i = first; i < end; i++) {
    offsets.push(length);
    length += sizes[i];
  }
  return { first, end, offsets, length };
}

/** Index of the bucket holding each parameter. */
export function bucketOfParameter(buckets: readonly Bucket[], count: number): number[] {
  const owner = new Array<number>(count);
  buckets.forEach((b, k) => {
    for (let i = b.first; i < b.end; i++) owner[i] = k;
  });
  return owner;
}

/** Where one parameter's elements meet a range [from, to) of a bucket's flat array. */
export interface Overlap {
  param: number;
  /** The overlapping elements as offsets inside the parameter. */
  start: number;
  stop: number;
  /** Where they sit relative to `from`. */
  at: number;
}

/**
 * The parameters that overlap [from, to) of `bucket` (a ZeRO chunk), with the overlapping part of each:
 * what a rank reads, updates or counts when it owns only that chunk of the flat gradients.
 */
export function overlaps(bucket: Bucket, sizes: readonly number[], from: number, to: number): Overlap[] {
  const out: Overlap[] = [];
  for (let i = bucket.first; i < bucket.end; i++) {
    const offset = bucket.offsets[i - bucket.first];
    const start = Math.max(from, offset);
    const stop = Math.min(to, offset + sizes[i]);
    if (start < stop) out.push({ param: i, start: start - offset, stop: stop - offset, at: start - from });
  }
  return out;
}
