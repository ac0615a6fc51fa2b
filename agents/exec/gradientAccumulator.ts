import * as tf from '@tensorflow/tfjs-core';

/**
 * Per-parameter gradient sums over a step's micro-batches (and a shared layer's calls), taken once
 * the step's gradients are final.
 */
export class GradientAccumulator {
  private sums: Array<tf.Tensor | null> = [];

  constructor(private readonly params: readonly tf.Variable[]) {}

  /** Add `grad` (whose ownership passes here) to parameter k's sum. */
  add(k: number, grad: tf.Tensor): void {
    const previous = this.sums[k];
    this.sums[k] = tf.keep(previous ? tf.add(previous, grad) : grad);
    if (previous) {
      previous.dispose();
      grad.dispose();
    }
  }

  /** Take parameter k's sum (zeros when nothing was added) and reset it. */
  take(k: number): tf.Tensor {
    const grad = this.sums[k] ?? tf.zerosLike(this.params[k]);
    this.sums[k] = null;
    return grad;
  }

  takeAll(): tf.Tensor[] {
    return this.params.map((_, k) => this.take(k));
  }

  dispose(): void {
    this.sums.forEach((g) => g?.dispose());
    this.sums = [];
  }
}
