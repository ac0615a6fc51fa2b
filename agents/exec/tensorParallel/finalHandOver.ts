import type * as tf from '@tensorflow/tfjs-core';
import type { FinalGradient } from '../stageExecutor.js';
import type { ShardedParamSpec } from './shardedParams.js';
import type { TensorGroup } from './tensorGroup.js';

/**
 * Hands a shard's final gradients to the data-parallel buckets during the step's last backward pass,
 * so their all-reduce overlaps the layers still to compute. A batch-split gradient is a partial sum:
 * its sum over the tensor-parallel group starts at once (every shard starts the same sums in the same
 * order, so their tags agree), and it is handed over when summed. Hand-overs happen in the order the
 * layers finished on every member, so every data-parallel member fills its buckets alike.
 */
export class FinalHandOver {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly group: TensorGroup,
    private readonly specs: ShardedParamSpec[],
    private readonly onFinal: FinalGradient,
  ) {}

  /** Gradients `grads` of parameters `indices`, final for this step (ownership passes here). */
  add(grads: tf.Tensor[], indices: number[]): void {
    indices.forEach((k, j) => {
      const grad = grads[j];
      const ready = this.specs[k].sum === 'batchSplit' ? this.group.allReduceSum(grad).finally(() => grad.dispose()) : Promise.resolve(grad);
      // Each failure is seen here; done() reports the first one.
      ready.catch(() => {});
      this.chain = this.chain.then(() => ready.then((g) => this.onFinal(k, g)));
      // Once a hand-over failed, the later ones never happen: their tensors are let go.
      this.chain.catch(() => ready.then((g) => g.dispose(), () => {}));
    });
  }

  /** Every gradient handed over; rejects if a sum failed. */
  done(): Promise<void> {
    return this.chain;
  }
}
