import * as tf from '@tensorflow/tfjs-core';
import { hashString } from '../../../engine/util/prng.js';

/**
 * Dropout whose mask depends only on (seed, step, sample index, layer): every synchronous plan — any
 * pipeline cut, replica count or micro-batch slicing — drops the same units of the same sample, and a
 * stage that recomputes its forward pass for the backward pass draws the very mask it used before.
 * tfjs-layers' Dropout draws from a global random stream instead, which no two plans would share.
 * Scaling is Keras's: kept units are multiplied by 1 / (1 − rate).
 */
export interface PassRows {
  seed: number;
  step: number;
  /** Global index (into the training split) of each row of the micro-batch. */
  samples: ArrayLike<number>;
}

/** One 32-bit hash of several integers (a SplitMix-style finaliser per word). */
function mix(h: number, v: number): number {
  h = Math.imul(h ^ v, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Keep-mask scaled by 1 / (1 − rate), shaped like `shape` ([rows, …]). `broadcastAxes` (SpatialDropout:
 * the spatial axes) draw one value for the whole axis, so a channel is dropped everywhere at once.
 */
export function dropoutMask(shape: number[], rate: number, layer: string, pass: PassRows, broadcastAxes: number[] = []): tf.Tensor {
  const maskShape = shape.map((d, i) => (i > 0 && broadcastAxes.includes(i) ? 1 : d));
  const perRow = maskShape.slice(1).reduce((a, b) => a * b, 1);
  const rows = maskShape[0];
  const out = new Float32Array(rows * perRow);
  const keep = 1 / (1 - rate);
  const base = mix(mix(hashString(layer), pass.seed >>> 0), pass.step >>> 0);
  const threshold = rate * 4294967296;
  for (let r = 0; r < rows; r++) {
    const h = mix(base, pass.samples[r] >>> 0);
    for (let e = 0; e < perRow; e++) out[r * perRow + e] = mix(h, e) >= threshold ? keep : 0;
  }
  return tf.tensor(out, maskShape, 'float32');
}
