import type * as tf from '@tensorflow/tfjs-core';
import type { GradientSync } from '../exec/gradientSync.js';
import type { FinalGradient } from '../exec/stageExecutor.js';
import type { StageContext } from '../runtime/stageContext.js';

/**
 * The end of a synchronous step's gradients: summed over the devices that computed parts of them,
 * then the update. Gradients handed over during the step's last backward pass (onFinal) start their
 * data-parallel bucket at once; the rest go at finish(). Gradients of layers that ran on a slice of
 * the batch inside a tensor-parallel group are summed over that group first; GradientSync sums over
 * the data-parallel group in buckets (ZeRO 0: all-reduce; 1 and 2: reduce-scatter, sharded update,
 * all-gather), clips by the global norm and applies the optimizer.
 */
export class StepGradients {
  private readonly handed = new Set<number>();
  private readonly sync: GradientSync;

  constructor(private readonly ctx: StageContext, step: number) {
    if (!ctx.gradientSync) throw new Error('The synchronous schedule needs the stage\'s gradient synchronisation (set up for gpipe and 1f1b plans).');
    this.sync = ctx.gradientSync;
    this.sync.beginStep(step);
  }

  /**
   * For the step's last backward pass: hands each final gradient to its bucket (a tensor-parallel
   * shard sums batch-split ones over its group first). Absent when overlap is turned off, or when there
   * is no communication to overlap (one replica, no shards): the stage then runs its faster one-tape
   * backward.
   */
  get onFinal(): FinalGradient | undefined {
    if (!this.ctx.overlapGradients) return undefined;
    if (this.ctx.dataParallelGroup.length <= 1 && !this.ctx.tensorGroup) return undefined;
    return (k, grad) => {
      this.handed.add(k);
      this.sync.gradReady(k, grad);
    };
  }

  /** Hand over everything not handed over yet, wait for the buckets, and update. */
  async finish(step: number): Promise<{ allReduceMs: number }> {
    const { module, tensorGroup } = this.ctx;
    await module.handedOver?.();
    const grads: Array<tf.Tensor | null> = module.takeGradients();
    for (const k of this.handed) {
      grads[k]!.dispose();
      grads[k] = null;
    }
    if (tensorGroup) {
      tensorGroup.phase = `s${step}/grads`;
      for (let k = 0; k < grads.length; k++) {
        if (!grads[k] || module.paramSpecs[k].sum !== 'batchSplit') continue;
        const summed = await tensorGroup.allReduceSum(grads[k]!);
        grads[k]!.dispose();
        grads[k] = summed;
      }
    }
    // Last parameters first: the order a backward pass finishes them in.
    for (let k = grads.length - 1; k >= 0; k--) if (grads[k]) this.sync.gradReady(k, grads[k]!);
    const { allReduceMs } = await this.sync.finish(step);
    return { allReduceMs };
  }
}
