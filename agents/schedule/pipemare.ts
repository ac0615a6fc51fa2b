import * as tf from '@tensorflow/tfjs-core';
import type { PipeMareOptions } from '../../engine/plan/plan.js';

/**
 * PipeMare (Yang, Zhang et al., 2019): asynchronous pipeline training without weight stashing, kept
 * accurate by two techniques. For stage i with delay τ_i — optimizer updates applied between the
 * forward pass that used the weights and the update that applies the resulting gradient:
 *
 * T1, learning-rate rescheduling. At update k the stage's step size is
 *       α_{k,i} = α_k · τ_i^(−(1 − min(k/K, 1)))
 *   i.e. divided by the delay at first and warmed up to the base α_k over K updates; a stage
 *   without delay (the last) always uses α_k.
 *
 * T2, discrepancy correction. The backward pass should differentiate at the weights the forward pass
 * saw, w_{k−τ}, but only w_k is kept. PipeMare tracks the weights' velocity with an exponential
 * moving average of the updates,
 *       δ_k = γ_i · δ_{k−1} + (1 − γ_i) · (w_k − w_{k−1}),   γ_i = D^(1/τ_i),
 *   and runs the backward pass at the extrapolated weights
 *       ŵ = w_k − τ_i · δ_k
 *   (the update itself is still applied to w_k).
 */
export function lrMultiplier(delay: number, update: number, options: PipeMareOptions): number {
  if (!options.lrRescheduling || delay <= 1) return 1;
  const progress = options.warmupUpdates === 0 ? 1 : Math.min(update / options.warmupUpdates, 1);
  return delay ** -(1 - progress);
}

/** The velocity estimate δ of one stage's weights, and the extrapolated backward weights ŵ. */
export class DiscrepancyCorrection {
  private velocity: tf.Tensor[] | null = null;

  constructor(private readonly options: PipeMareOptions) {}

  /** After an update from `before` to `after` (same order as the parameters), with the stage delay τ. */
  observe(before: tf.Tensor[], after: tf.Tensor[], delay: number): void {
    if (!this.options.discrepancyCorrection || delay < 1) return;
    const gamma = this.options.decay ** (1 / delay);
    const next = tf.tidy(() => after.map((a, i) => {
      const step = tf.sub(a, before[i]);
      return this.velocity ? tf.add(tf.mul(this.velocity[i], gamma), tf.mul(step, 1 - gamma)) : tf.mul(step, 1 - gamma);
    }));
    this.velocity?.forEach((v) => v.dispose());
    this.velocity = next;
  }

  /** ŵ = w − τ·δ for a micro-batch whose forward pass ran `delay` updates ago; null when no correction applies. */
  weightsFor(params: tf.Tensor[], delay: number): tf.Tensor[] | null {
    if (!this.options.discrepancyCorrection || !this.velocity || delay < 1) return null;
    return tf.tidy(() => params.map((w, i) => tf.sub(w, tf.mul(this.velocity![i], delay))));
  }

  /** Relative size of the correction, ‖τ·δ‖ / ‖w‖: how far the backward weights move. */
  size(params: tf.Tensor[], delay: number): number {
    if (!this.velocity || delay < 1) return 0;
    return tf.tidy(() => {
      const num = this.velocity!.reduce((acc, v) => acc + (tf.sum(tf.square(v)).dataSync()[0] as number), 0);
      const den = params.reduce((acc, w) => acc + (tf.sum(tf.square(w)).dataSync()[0] as number), 0);
      return (delay * Math.sqrt(num)) / Math.max(Math.sqrt(den), 1e-12);
    });
  }

  dispose(): void {
    this.velocity?.forEach((v) => v.dispose());
  }
}
