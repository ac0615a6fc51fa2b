import * as tf from '@tensorflow/tfjs-core';

/**
 * Gradient clipping by global norm: when the L2 norm of all of a step's gradients (the whole model)
 * exceeds `clipNorm`, every gradient is scaled by clipNorm / norm, so the update keeps its direction
 * but its size is bounded. One process and every distributed layout compute the same norm (up to
 * float rounding) and apply the same scale, so clipping does not break the exactness invariant.
 */

/** Keeps the scale finite for an all-zero gradient; the same constant as the common frameworks use. */
const NORM_EPSILON = 1e-6;

/** The factor gradients are multiplied by: 1 while the norm is within bounds. */
export function clipScale(norm: number, clipNorm: number): number {
  return Math.min(1, clipNorm / (norm + NORM_EPSILON));
}

/**
 * Σ v² in float64, so that summing many float32 squares loses nothing before the ranks' partial sums
 * are combined. With `from`/`to`, only that range of `values` counts.
 */
export function sumOfSquares(values: Float32Array, from = 0, to = values.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += values[i] * values[i];
  return sum;
}

/**
 * Multiply gradients by `scale` (taking ownership of `grads`); a scale of 1 returns them untouched so
 * an unclipped step is bit-identical to training without clipping.
 */
export function scaleGradients(grads: tf.Tensor[], scale: number): tf.Tensor[] {
  if (scale >= 1) return grads;
  return grads.map((g) => {
    const scaled = tf.mul(g, scale);
    g.dispose();
    return scaled;
  });
}

/** One process's clipping: the norm over `grads` (the whole model's), then the scale applied. */
export function clipByGlobalNorm(grads: tf.Tensor[], clipNorm: number): tf.Tensor[] {
  const norm = Math.sqrt(grads.reduce((sum, g) => sum + sumOfSquares(g.dataSync() as Float32Array), 0));
  return scaleGradients(grads, clipScale(norm, clipNorm));
}
